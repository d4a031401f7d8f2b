// node --test test/receiver.node.test.mjs
import { after, before, test } from 'node:test';
import * as scenario from './scenarios.mjs';

let app;
before(async () => {
  app = await scenario.startApp();
});
after(() => app.close());

test('accepts a validly signed delivery', () => scenario.acceptsAValidDelivery(app));
test('refuses a tampered delivery', () => scenario.refusesATamperedDelivery(app));
test('refuses a stale delivery', () => scenario.refusesAStaleDelivery(app));
test('acts on a duplicate delivery once', () => scenario.actsOnADuplicateOnce(app));
test('answers a recorded morning as it was answered', () => scenario.answersTheRecordedMorningAsBefore(app));
test('a handler slower than 30 s is a failed attempt', () => scenario.aSlowHandlerIsAFailedAttempt());
