export * from './signature.js';
export * from './event-types.js';
export * from './envelope.js';
export * from './samples.js';
export * from './resources.js';
export * from './errors.js';
export * from './data-path.js';
export * from './shape.js';
