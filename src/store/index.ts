export * from './capture.js';
export { CaptureStore, type CaptureStoreOptions } from './capture-store.js';
export type { CaptureListener, CaptureObserver } from './held.js';
export { coalesceWrites } from './coalesce.js';
export type { Staged } from './group-commit.js';
export { readCaptureStore, type StoreReading, StoreUnreadableError } from './read-only.js';
export { DiskFullError, isDiskFull } from './disk-full.js';
