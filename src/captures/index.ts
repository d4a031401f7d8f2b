export { curlScript } from './curl.js';
export { type Fixture, fixtureOf, fixtureProblem, signedFixture } from './fixture.js';
export { harOf } from './har.js';
export { connectToListen, replayDirect, type ReplayOutcome } from './replay.js';
export { type CaptureFilter, parseSince, selectCaptures } from './select.js';
export { type Outcome, OUTCOMES, outcomeOf, statusOf } from '../story/index.js';
export { wholeCapture, withBody, type WithBody } from './whole.js';
