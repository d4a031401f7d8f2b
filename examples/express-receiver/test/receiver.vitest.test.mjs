// npx vitest run (from this folder)
import { afterAll, beforeAll, test } from 'vitest';
import * as scenario from './scenarios.mjs';

let app;
beforeAll(async () => {
  app = await scenario.startApp();
});
afterAll(() => app.close());

test('accepts a validly signed delivery', () => scenario.acceptsAValidDelivery(app));
test('refuses a tampered delivery', () => scenario.refusesATamperedDelivery(app));
test('refuses a stale delivery', () => scenario.refusesAStaleDelivery(app));
test('acts on a duplicate delivery once', () => scenario.actsOnADuplicateOnce(app));
test('answers a recorded morning as it was answered', () => scenario.answersTheRecordedMorningAsBefore(app));
test('a handler slower than 30 s is a failed attempt', () => scenario.aSlowHandlerIsAFailedAttempt());
