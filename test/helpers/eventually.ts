/** Options for `vi.waitFor`, as long as `expect.poll`'s (vitest.config.ts): its 1 s default is short on a loaded CI machine. */
export const eventually = { timeout: 4_000, interval: 20 } as const;
