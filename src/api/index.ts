export * from './client.js';
export * from './error.js';
export * from './outlook.js';
export * from './sandbox-client.js';
