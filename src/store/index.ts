export * from './private-files.js';
