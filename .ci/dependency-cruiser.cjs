// `npm run lint` runs dependency-cruiser over src/ with this: imports point down (DESIGN.md), so a cycle
// anywhere is an error.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
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
