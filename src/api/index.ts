export * from './client.js';
export * from './error.js';
