export { ApiClient, ApiError } from './api/index.js';
export * from './contract/index.js';
