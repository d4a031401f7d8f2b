export function openFiles(pid: number): Promise<string[]>;
