export { ManualClock } from './clock.js';
export { type Delivery, type SandboxTestOptions, startSandbox, type TestSandbox } from './sandbox.js';
export {
  checkReceiver,
  envelopeOf,
  type SendOptions,
  type SendResult,
  sendDelivery,
  signDelivery,
  type SignedDelivery,
} from './send.js';
export type { Fixture } from '../captures/index.js';
export type { CheckReport } from '../check/index.js';
export {
  loadScenario,
  type PlayedDelivery,
  type PlayOptions,
  type PlayResult,
  playScenario,
  type Scenario,
  type ScenarioDelivery,
} from '../captures/index.js';
