/** Waits `ms`: what `sleep` options default to (a test injects its own, to control time). */
export const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
