import { buildProgram } from './program.js';
import { run } from './run.js';

await run(process.argv, buildProgram);
