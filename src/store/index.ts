export * from './capture.js';
export { CaptureStore, type CaptureListener, type CaptureObserver, type CaptureStoreOptions } from './capture-store.js';
export { coalesceWrites } from './coalesce.js';
export type { Staged } from './group-commit.js';
export { claimStateFile, isProcessAlive, lockAgain, StoreLockedError } from './lock.js';
export * from './private-files.js';
export { readCaptureStore, type StoreReading, StoreUnreadableError } from './read-only.js';
export { DiskFullError, isDiskFull } from './disk-full.js';
