export { curlScript } from './curl.js';
export { type Fixture, fixtureOf, fixtureProblem, signedFixture } from './fixture.js';
export { harOf } from './har.js';
export { connectToListen, replayDirect, type ReplayOutcome } from './replay.js';
export {
  type CaptureFilter,
  latestFailures,
  type Outcome,
  OUTCOMES,
  outcomeOf,
  parseSince,
  selectCaptures,
  statusOf,
} from './select.js';
