export * from './outcome.js';
export * from './story.js';
export * from './words.js';
export * from './service.js';
