// `npm run lint` runs dependency-cruiser over src/ with this: imports point down (DESIGN.md), so a cycle
// anywhere is an error.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    // The layers of DESIGN.md, lowest first: contract; http, store, api; the components; listen; cli.
    {
      name: 'contract-is-pure',
      severity: 'error',
      comment:
        'contract/ holds pure functions and types: it imports nothing of clockhook but itself and the error classes every layer shares (src/errors.ts).',
      from: { path: '^src/contract/' },
      to: { path: '^src/', pathNot: '^src/(contract/|shared/|errors\\.ts$)' },
    },
    {
      name: 'shared-is-a-leaf',
      severity: 'error',
      comment:
        'shared/ holds the rules the page shares with the rest (the inspector serves their build as /shared/): each file imports nothing but shared/, or the page could not load it.',
      from: { path: '^src/shared/' },
      to: { path: '^src/', pathNot: '^src/shared/' },
    },
    {
      name: 'folder-below-its-users',
      comment:
        "folder/ keeps the .clockhook folder's files for the store, the sandbox, listen, the relay client and the page: it knows none of them.",
      from: { path: '^src/folder/' },
      to: { path: '^src/', pathNot: '^src/(folder|contract)/|^src/[^/]+\\.ts$' },
    },
    {
      name: 'shared-below-components',
      severity: 'error',
      comment: 'http/, store/ and api/ sit below every component (story/ too): they never import one.',
      from: { path: '^src/(http|store|api)/' },
      to: { path: '^src/(story|listener|listen|inspector|relay|sandbox|check|captures|testing|cli)/' },
    },
    {
      name: 'story-decides-below-every-surface',
      severity: 'error',
      comment:
        'story/ decides what each delivery was, from captures and the service view: pure, it knows no surface that renders it (the one-idea files at the root are below everything).',
      from: { path: '^src/story/' },
      to: { path: '^src/', pathNot: '^src/((story|store|api|contract|shared)/|[^/]+\\.ts$)' },
    },
    {
      name: 'components-below-listen',
      severity: 'error',
      comment: 'The listener, inspector, relay, sandbox and check do not know the listen command or the CLI.',
      from: { path: '^src/(listener|inspector|relay|sandbox|check)/' },
      to: { path: '^src/(listen|cli|testing)/' },
    },
    {
      name: 'mcp-beside-the-cli',
      severity: 'error',
      comment: 'mcp/ (clockhook mcp) is a surface like the CLI: only the CLI starts it, and nothing below imports it.',
      from: { path: '^src/', pathNot: '^src/(cli|mcp)/' },
      to: { path: '^src/mcp/' },
    },
    {
      name: 'cli-on-top',
      severity: 'error',
      comment: 'Only the CLI imports the CLI.',
      from: { pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'Imports point down: cli -> listen -> listener / inspector / relay / sandbox -> store / api / check -> contract.',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
