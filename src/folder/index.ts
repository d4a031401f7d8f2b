// The `.clockhook/` folder: one typed read and write per file of DESIGN.md's table, its locks, and one keeper.
export { folderFiles, type FolderFiles, STATE_DIR } from './files.js';
export { FolderKeeper, type Kept, LOOK_EVERY_MS, type OwnLook } from './keeper.js';
export { acquireLock, claimStateFile, isProcessAlive, lockAgain, StoreLockedError } from './lock.js';
export * from './private-files.js';
export * from './sandbox-json.js';
export * from './listen-json.js';
export * from './endpoints-json.js';
export { readRelayRecords, type RelayRecord, saveRelayRecord } from './relay-json.js';
export { loadOrCreateToken, writeToken } from './token.js';
