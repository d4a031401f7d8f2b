// The completion scripts, made from the CLI's own commands (see completionTable). They complete
// `clockhook …` and `npx clockhook …` alike: commands, flags, the values of --format, --status, --type and
// --events, the shells of `completion`, the event types of `trigger`, and the capture, event and endpoint
// ids of the .clockhook/ folder where the shell is, read with grep (no Node start per Tab).

/**
 * What completion offers, by command path ("", "listen", "relay keys"): the words after it (its
 * subcommands and flags, and a positional's values), and which of those words are subcommands.
 */
export interface CompletionTable {
  paths: { path: string; words: string[]; subcommands: string[]; ids: 'captures' | 'events' | 'endpoints' | null }[];
  /** Values by flag; `--status` differs by command, so its list is per path. */
  values: Record<string, string[]>;
  statusByPath: Record<string, string[]>;
  /** Flags that take a file. */
  files: string[];
  types: string[];
}

/** Single quotes for bash and fish: a word of our own never holds one, so they are plain. */
const q = (word: string) => `'${word}'`;

type Kind = 'captures' | 'events' | 'endpoints';

/** The paths that complete ids of each kind. */
function idPaths(table: CompletionTable, kind: Kind): string[] {
  return table.paths.filter((p) => p.ids === kind).map((p) => p.path);
}

/** The bash functions made from the table: the words of each path, its subcommands, ids and statuses. */
function bashTables(table: CompletionTable): string {
  const words = table.paths.map((p) => `    ${q(p.path)}) echo ${q(p.words.join(' '))} ;;`).join('\n');
  const subs = table.paths.flatMap((p) => p.subcommands.map((sub) => q(`${p.path}|${sub}`))).join('|');
  const ids = (['captures', 'events', 'endpoints'] as const)
    .map((kind) => `    ${idPaths(table, kind).map(q).join('|')}) echo ${kind} ;;`)
    .join('\n');
  const status = Object.entries(table.statusByPath)
    .map(([path, values]) => `    ${q(path)}) echo ${q(values.join(' '))} ;;`)
    .join('\n');
  // `*` is left out of the types: unquoted in COMPREPLY it would be taken as a file pattern.
  const types = table.types.filter((type) => type !== '*').join(' ');
  return String.raw`_clockhook_types=${q(types)}

# The words that may follow a command path ("", "captures", "relay keys").
_clockhook_words() {
  case "$1" in
${words}
  esac
}

# Whether word $2 is a subcommand of path $1.
_clockhook_sub() {
  case "$1|$2" in
    ${subs}) return 0 ;;
  esac
  return 1
}

# Which ids follow a path: captures, events, endpoints, or none.
_clockhook_ids_of() {
  case "$1" in
${ids}
  esac
}

_clockhook_status() {
  case "$1" in
${status}
    *) echo '2xx failed rejected' ;;
  esac
}

`;
}

/** The bash functions that complete a line, with the tables above. */
function bashDriver(table: CompletionTable): string {
  return String.raw`# The ids of that kind in the .clockhook/ folder here.
_clockhook_ids() {
  case "$1" in
    captures) cat .clockhook/captures.json .clockhook/captures.json.journal 2>/dev/null | grep -o '"id":"cap_[0-9a-z]*"' | cut -d'"' -f4 ;;
    events) cat .clockhook/captures.json .clockhook/captures.json.journal 2>/dev/null | grep -o '"envelope":{"id":"evt_[0-9A-Za-z_]*"' | cut -d'"' -f6 ;;
    endpoints) grep -o '"id": *[0-9]*' .clockhook/endpoints.json 2>/dev/null | grep -o '[0-9]*$' ;;
  esac | sort -u
}

# Completes COMP_WORDS from index $1, the word after "clockhook".
_clockhook_complete() {
  local first=$1 cur="${'$'}{COMP_WORDS[COMP_CWORD]}" prev="" path="" i word words ids head
  [ "$COMP_CWORD" -gt "$first" ] && prev="${'$'}{COMP_WORDS[COMP_CWORD-1]}"
  for ((i = first; i < COMP_CWORD; i++)); do
    word="${'$'}{COMP_WORDS[i]}"
    if _clockhook_sub "$path" "$word"; then path="${'$'}{path:+$path }$word"; fi
  done
  case "$prev" in
    --type|--events)
      head=""
      [[ $cur == *,* ]] && head="${'$'}{cur%,*},"
      COMPREPLY=($(compgen -P "$head" -W "$_clockhook_types" -- "${'$'}{cur##*,}"))
      return ;;
    --format) COMPREPLY=($(compgen -W ${q(table.values['--format'].join(' '))} -- "$cur")); return ;;
    --status) COMPREPLY=($(compgen -W "$(_clockhook_status "$path")" -- "$cur")); return ;;
    ${table.files.join('|')}) COMPREPLY=($(compgen -f -- "$cur")); return ;;
  esac
  words="$(_clockhook_words "$path")"
  ids="$(_clockhook_ids_of "$path")"
  if [ -n "$ids" ] && [[ $cur != -* ]]; then words="$words $(_clockhook_ids "$ids")"; fi
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}

_clockhook() { _clockhook_complete 1; }

# npx clockhook …; for any other package npx runs, the shell's own completion (files) goes on.
_clockhook_npx() {
  if [ "$COMP_CWORD" -ge 2 ] && [ "${'$'}{COMP_WORDS[1]}" = clockhook ]; then _clockhook_complete 2; fi
}

complete -F _clockhook clockhook
complete -o default -F _clockhook_npx npx
`;
}

const bashFunctions = (table: CompletionTable) => `${bashTables(table)}\n${bashDriver(table)}`;

/** Bash: plain `complete -F` and `compgen`, so it works in a bash without the bash-completion package. */
export function bashScript(table: CompletionTable): string {
  return `# clockhook completion for bash: source <(npx clockhook completion bash), or put that line in ~/.bashrc
${bashFunctions(table)}`;
}

/** zsh runs the bash completion through its bashcompinit, as many CLIs' zsh completions do. */
export function zshScript(table: CompletionTable): string {
  return `# clockhook completion for zsh: source <(npx clockhook completion zsh), or put that line in ~/.zshrc
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bashFunctions(table)}`;
}

/** Fish: one function finds the command path in the words typed (after npx, when there) and prints what may follow. */
export function fishScript(table: CompletionTable): string {
  const words = table.paths
    .map((p) => `        case ${q(p.path)}\n            printf '%s\\n' ${p.words.map(q).join(' ')}`)
    .join('\n');
  const subs = table.paths.flatMap((p) => p.subcommands.map((sub) => q(`${p.path}|${sub}`))).join(' ');
  return String.raw`# clockhook completion for fish: npx clockhook completion fish > ~/.config/fish/completions/clockhook.fish
function __clockhook_words --argument-names path
    switch "$path"
${words}
    end
end

function __clockhook_sub --argument-names path word
    switch "$path|$word"
        case ${subs}
            return 0
    end
    return 1
end

function __clockhook_ids --argument-names kind
    switch $kind
        case captures
            cat .clockhook/captures.json .clockhook/captures.json.journal 2>/dev/null | string match -r -a -g '"id":"(cap_[0-9a-z]+)"' | sort -u
        case events
            cat .clockhook/captures.json .clockhook/captures.json.journal 2>/dev/null | string match -r -a -g '"envelope":\{"id":"(evt_[0-9A-Za-z_]+)"' | sort -u
        case endpoints
            cat .clockhook/endpoints.json 2>/dev/null | string match -r -a -g '"id": *([0-9]+)' | sort -u
    end
end

${fishCandidates(table)}
complete -c clockhook -f -a '(__clockhook_candidates)'
complete -c npx -n 'contains -- clockhook (commandline -opc)' -f -a '(__clockhook_candidates)'
`;
}

/** Fish's function that finds the command path among the words typed and prints what may follow. */
function fishCandidates(table: CompletionTable): string {
  const ids = (['captures', 'events', 'endpoints'] as const)
    .map((kind) => `        case ${idPaths(table, kind).map(q).join(' ')}\n            __clockhook_ids ${kind}`)
    .join('\n');
  const status = Object.entries(table.statusByPath)
    .map(
      ([path, values]) =>
        `                case ${q(path)}\n                    printf '%s\\n' ${values.map(q).join(' ')}`,
    )
    .join('\n');
  return String.raw`function __clockhook_candidates
    set -l typed (commandline -opc)
    set -l at (contains -i -- clockhook $typed)
    or return
    set -l path ''
    set -l prev ''
    for word in $typed[(math $at + 1)..-1]
        if __clockhook_sub "$path" $word
            set path (string trim -- "$path $word")
        end
        set prev $word
    end
    switch "$prev"
        case --type --events
            printf '%s\n' ${table.types.map(q).join(' ')}
            return
        case --format
            printf '%s\n' ${table.values['--format'].map(q).join(' ')}
            return
        case --status
            switch "$path"
${status}
                case '*'
                    printf '%s\n' 2xx failed rejected
            end
            return
        case ${table.files.join(' ')}
            __fish_complete_path (commandline -ct)
            return
    end
    __clockhook_words "$path"
    switch "$path"
${ids}
    end
end

`;
}
