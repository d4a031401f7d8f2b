export * from './outcome.js';
export * from './story.js';
export * from './words.js';
export * from './service.js';
export { type DeliveryStory, type EventStory, type ServiceView, storyKey } from './event-story.js';
export { type CaptureStory, StoryBook } from './book.js';
export type { Decided } from './summary.js';
export {
  DISABLES_AFTER,
  endpointProblem,
  missedSummary,
  missedWords,
  type OutlookWords,
  outlookWords,
  sayOutlook,
} from './outlook.js';
export { CAPTURE_STORY_SCHEMA } from './schema.js';
