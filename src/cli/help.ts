import type { Command } from 'commander';
import { EVENT_TYPES, isDomainEventType, PING_EVENT_TYPE, unknownTypeWords } from '../contract/index.js';
import { UsageError } from '../errors.js';

/**
 * Ends a command's `--help` with examples, the way `gh` and the Stripe CLI do: each a line saying what it
 * does, then the command as it is typed.
 */
export function withExamples(command: Command, examples: [what: string, typed: string][]): Command {
  const text = examples.map(([what, typed]) => `  # ${what}\n  $ ${typed}`).join('\n\n');
  return command.addHelpText('after', `\nExamples:\n${text}\n`);
}

/** The contract's event types, grouped by resource, for a command's `--help`. */
export function eventTypesHelp(): string {
  const byResource = new Map<string, string[]>();
  for (const type of EVENT_TYPES) {
    const resource = type.slice(0, type.indexOf('.'));
    byResource.set(resource, [...(byResource.get(resource) ?? []), type]);
  }
  const lines = [...byResource.values()].map((types) => `  ${types.join(', ')}`);
  return `\nEvent types (${EVENT_TYPES.length}):\n${lines.join('\n')}\n`;
}

/**
 * `--type` of a list filter: one of the service's types (or the ping's). Another is refused here, as every
 * surface refuses it (unknownTypeWords), and never sent to the API, whose error would be an HTTP line.
 */
export function parseEventType(value: string, flag: string): string {
  const type = value.trim();
  if (type === PING_EVENT_TYPE || isDomainEventType(type)) return type;
  throw new UsageError(`${flag}: ${unknownTypeWords(type)}.`);
}

/** Each command's examples, by its path (`endpoints create`), added to its `--help` by `addExamples`. */
const EXAMPLES: Record<string, [string, string][]> = {
  '': [
    [
      'see deliveries arrive, verified, and forward them to your app on port 3000',
      'npx clockhook listen --forward-to 3000',
    ],
    ['send one from the sandbox (in another terminal)', 'npx clockhook trigger punch.created'],
    ['does your receiver honour the webhook rules?', 'npx clockhook check --forward-to 3000'],
    ['any command: what it takes, with examples', 'npx clockhook listen --help'],
  ],
  listen: [
    ['forward every verified delivery to your app on port 3000', 'npx clockhook listen --forward-to 3000'],
    [
      'punches to one service, time cards to another, the rest to a third',
      "npx clockhook listen --forward-to 'punch.*=3000/attendance' --forward-to 'time_card.*=4000/payroll' --forward-to 3000/hooks",
    ],
    [
      'deliveries arrive under /hooks, and go to the same path of your app',
      'npx clockhook listen --path /hooks --forward-to 3000/hooks',
    ],
    [
      'test that your handler survives duplicates and reordering (docs/faults.md)',
      "npx clockhook listen --forward-to 3000 --faults 'duplicate=20%,reorder=300'",
    ],
    [
      'a public URL from a clockhook relay, for the real service',
      'npx clockhook listen --relay https://hooks.example.com --forward-to 3000',
    ],
    [
      'for scripts: one JSON line per delivery, no page',
      'npx clockhook listen --forward-to 3000 --json --no-inspector',
    ],
  ],
  secret: [
    [
      'start your app with the secret of the endpoint listen registered',
      'WEBHOOK_SECRET=$(npx clockhook secret) npm start',
    ],
    ['the secret of one endpoint among several on file', 'npx clockhook secret 3'],
  ],
  sandbox: [
    ['run the sandbox on its own; listen and the other commands find it', 'npx clockhook sandbox'],
    ['retries in milliseconds instead of minutes (1 min becomes 60 ms)', 'npx clockhook sandbox --time-scale 0.001'],
  ],
  relay: [
    [
      'a relay behind a TLS proxy that serves https://hooks.example.com',
      'npx clockhook relay --port 8080 --public-url https://hooks.example.com',
    ],
    ['serve HTTPS itself', 'npx clockhook relay --port 443 --tls-cert cert.pem --tls-key key.pem'],
    [
      'one of several instances sharing their channels (behind a load balancer)',
      'npx clockhook relay --port 8081 --public-url https://hooks.example.com --redis redis://127.0.0.1:6379/0',
    ],
  ],
  'relay keys add': [
    ['a key for a team member, printed once', 'npx clockhook relay keys add alice --redis redis://127.0.0.1:6379/0'],
    ['in a keys file (0600) of a relay without Redis', 'npx clockhook relay keys add bob --keys relay-keys.json'],
  ],
  'relay keys list': [
    ["each key's channels now and requests in the last hour", 'npx clockhook relay keys list --keys relay-keys.json'],
  ],
  'relay keys revoke': [['let a member go', 'npx clockhook relay keys revoke alice --redis redis://127.0.0.1:6379/0']],
  'relay keys': [
    ['a key for a team member, printed once', 'npx clockhook relay keys add alice --redis redis://127.0.0.1:6379/0'],
    ["each key's channels now and requests in the last hour", 'npx clockhook relay keys list --keys relay-keys.json'],
    ['let a member go', 'npx clockhook relay keys revoke alice --redis redis://127.0.0.1:6379/0'],
  ],
  check: [
    ['test the receiver on port 3000 with the secret listen registered', 'npx clockhook check --forward-to 3000'],
    [
      "with your app's own secret, and its duplicate counter",
      'npx clockhook check --forward-to 3000/hooks --secret whsec_… --dedupe-probe http://localhost:3000/dedupe',
    ],
    ['for CI: the report as JSON, exit 1 when a check fails', 'npx clockhook check --forward-to 3000 --json'],
  ],
  trigger: [
    ['send a punch.created with sample data', 'npx clockhook trigger punch.created'],
    ['with data of your own', 'npx clockhook trigger employee.created --data employee.json'],
    ['data from standard input', 'echo \'{"id": 42}\' | npx clockhook trigger employee.created --data -'],
    [
      'the sample with fields changed and one removed',
      'npx clockhook trigger punch.created --set note=late --set employeeId=7 --unset locationId',
    ],
    ['a burst of 50, five at a time', 'npx clockhook trigger punch.created --count 50 --concurrency 5'],
  ],
  captures: [
    ['the newest captures, one line each', 'npx clockhook captures list'],
    ['the failed ones of the last hour', 'npx clockhook captures list --status failed --since 1h'],
    ['one capture whole', 'npx clockhook captures show cap_…'],
    [
      "every punch as a HAR file for a browser's network panel",
      'npx clockhook captures export --type punch.created --format har -o punches.har',
    ],
  ],
  'captures list': [
    ['the newest, one line each', 'npx clockhook captures list'],
    [
      'each event whose newest delivery failed, with no replay taken since',
      'npx clockhook captures list --status failed',
    ],
    ['as JSON lines, each with its story, for jq', 'npx clockhook captures list --json --limit 100'],
  ],
  'captures show': [
    ['headers, body, signature verdict and the answer', 'npx clockhook captures show cap_…'],
    ['as JSON, with the whole body', 'npx clockhook captures show cap_… --json | jq -r .body'],
  ],
  'captures export': [
    [
      'test fixtures, one file each, for your tests',
      'npx clockhook captures export cap_… --format fixture -o test/fixtures/',
    ],
    [
      'a script that sends them again with curl',
      'npx clockhook captures export --since 10m --format curl -o replay.sh',
    ],
    [
      'the last two hours as a scenario, to play in a test',
      'npx clockhook captures export --since 2h --format scenario -o test/morning.scenario.json',
    ],
  ],
  types: [
    ['TypeScript types of every event type, from what arrived', 'npx clockhook types -o src/webhook-events.ts'],
    ['as JSON Schema, for a validator', 'npx clockhook types --format json-schema -o webhook-events.schema.json'],
    [
      "in CI: exit 1 when a recorded scenario's payloads moved from the committed types",
      'npx clockhook types --check src/webhook-events.ts --scenario test/morning.scenario.json',
    ],
  ],
  replay: [
    ['once the handler is fixed: every event whose latest delivery failed', 'npx clockhook replay --failed'],
    ['two captures, with their original signatures', 'npx clockhook replay cap_… cap_… --as-is'],
    [
      'in CI, against the app, with no listen running',
      'npx clockhook replay --failed --to http://localhost:3000/hooks --secret "$WEBHOOK_SECRET"',
    ],
    [
      'a recorded scenario against the app, without waits',
      'npx clockhook replay --scenario test/morning.scenario.json --to http://localhost:3000/hooks --speed max',
    ],
  ],
  endpoints: [
    ['list the endpoints of the sandbox (or of the API with --api-key)', 'npx clockhook endpoints list'],
    [
      'register one that takes punches only',
      'npx clockhook endpoints create --url https://example.com/hooks --events punch.created,punch.updated',
    ],
    ['send it a ping', 'npx clockhook endpoints ping 3'],
    ['enable it again after 10 failed deliveries disabled it', 'npx clockhook endpoints enable 3'],
  ],
  'endpoints get': [['one endpoint: its URL, event types and status', 'npx clockhook endpoints get 3']],
  'endpoints ping': [['a ping reaches it even when disabled: is it reachable?', 'npx clockhook endpoints ping 3']],
  'endpoints enable': [['deliveries to it again after 10 failed ones disabled it', 'npx clockhook endpoints enable 3']],
  'endpoints disable': [['no deliveries to it for now', 'npx clockhook endpoints disable 3']],
  'endpoints update': [
    ['punches only, from now on', 'npx clockhook endpoints update 3 --events punch.created,punch.updated'],
    ['a new URL', 'npx clockhook endpoints update 3 --url https://example.com/new-hooks'],
  ],
  'endpoints delete': [['gone for good, with its secret', 'npx clockhook endpoints delete 3']],
  'endpoints list': [['as JSON, every page', 'npx clockhook endpoints list --limit 1000 --json']],
  'endpoints create': [
    ['an endpoint for every event type', 'npx clockhook endpoints create --url https://example.com/hooks'],
  ],
  events: [
    ['the newest events of one type', 'npx clockhook events list --type punch.created'],
    ['an event with its delivery attempts, and when the service tries again', 'npx clockhook events get evt_…'],
    ['send it again now', 'npx clockhook events redeliver evt_…'],
  ],
  'events get': [
    ['its delivery attempts, its state and when the service tries again', 'npx clockhook events get evt_…'],
    ['as JSON, with its story', 'npx clockhook events get evt_… --json'],
  ],
  'events redeliver': [
    ['to every endpoint subscribed to it now', 'npx clockhook events redeliver evt_…'],
    ['what listen missed while it was off, from another terminal', 'npx clockhook events redeliver --missed'],
  ],
  'events list': [['the next page', 'npx clockhook events list --cursor <the cursor printed last>']],
  init: [
    ['write clockhook.config.json here, then edit its routes', 'npx clockhook init'],
    ['listen as the file says, with no flags', 'npx clockhook listen'],
  ],
  mcp: [
    ['add it to Claude Code, for this project', 'claude mcp add clockhook -- npx clockhook mcp'],
    ['what a client runs (VS Code, Cursor: see docs/mcp.md)', 'npx clockhook mcp'],
    ['with the real API (CLOCKHOOK_API_KEY set): let tools redeliver and ping', 'npx clockhook mcp --allow-writes'],
  ],
  completion: [
    [
      'bash: complete clockhook in this shell (put the line in ~/.bashrc to keep it)',
      'source <(npx clockhook completion bash)',
    ],
    ['zsh', 'source <(npx clockhook completion zsh)'],
    ['fish', 'npx clockhook completion fish > ~/.config/fish/completions/clockhook.fish'],
  ],
};

/** Adds the examples above to every command that has some. */
export function addExamples(program: Command): void {
  const visit = (command: Command, path: string) => {
    const examples = EXAMPLES[path];
    if (examples) withExamples(command, examples);
    for (const sub of command.commands) visit(sub, path ? `${path} ${sub.name()}` : sub.name());
  };
  visit(program, '');
}
