import { readdir, readlink } from 'node:fs/promises';

/**
 * The files a process holds open (`/proc/<pid>/fd`, Linux), sockets and pipes left out: what each is linked to,
 * with ` (deleted)` after a file that was deleted while open (it keeps its disk space until closed).
 */
export async function openFiles(pid) {
  const fds = await readdir(`/proc/${pid}/fd`);
  const links = await Promise.all(fds.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')));
  return links.filter((link) => link.startsWith('/'));
}
