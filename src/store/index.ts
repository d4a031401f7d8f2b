export * from './capture.js';
export { CaptureStore, type CaptureListener, type CaptureObserver, type CaptureStoreOptions } from './capture-store.js';
export { coalesceWrites } from './coalesce.js';
export type { Staged } from './group-commit.js';
export { readCaptureStore, type StoreReading, StoreUnreadableError } from './read-only.js';
export { DiskFullError, isDiskFull } from './disk-full.js';
