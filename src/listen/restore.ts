import { type FolderKeeper, folderFiles, type ListenDiscovery, writeListenDiscovery } from '../folder/index.js';
import type { Setup } from './session.js';

/**
 * Writes listen.json (how replay and the other commands find this listen), kept by the state folder's keeper
 * until the session ends, when it is removed.
 */
export async function keepListenDiscovery(
  { stateDir, keeper, cleanups }: Pick<Setup, 'stateDir' | 'cleanups'> & { keeper: FolderKeeper },
  found: Omit<ListenDiscovery, 'pid'>,
): Promise<void> {
  const path = folderFiles(stateDir).listen;
  const remove = await writeListenDiscovery(path, found);
  const unkeep = keeper.keep({
    what: 'listen.json',
    paths: [path],
    write: async () => void (await writeListenDiscovery(path, found)),
  });
  cleanups.push(async () => {
    unkeep();
    await remove();
  });
}
