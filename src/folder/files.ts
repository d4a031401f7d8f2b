// The `.clockhook/` folder's files, DESIGN.md's table: one name each, and one place that says where they are.
import { join } from 'node:path';

/** The folder clockhook keeps its state in, in the project folder it runs from. */
export const STATE_DIR = '.clockhook';

/** Where each file of a `.clockhook` folder is (`dir`: the folder, `.clockhook` in the folder run from). */
export function folderFiles(dir: string = STATE_DIR) {
  return {
    dir,
    /** The capture store (listen): a snapshot, beside it its journal and large bodies. */
    captures: join(dir, 'captures.json'),
    /** The sandbox's state (lowdb). */
    sandboxState: join(dir, 'sandbox-db.json'),
    /** How other commands find a running sandbox: `{ apiBase, apiKey, account, pid }`. */
    sandbox: join(dir, 'sandbox.json'),
    /** The endpoints listen registered: url, id, secret. */
    endpoints: join(dir, 'endpoints.json'),
    /** `listen --relay`: `{ relay, channel, token, publicUrl }`. */
    relay: join(dir, 'relay.json'),
    /** The page's token, so that an open page reconnects after a restart. */
    token: join(dir, 'inspector-token'),
    /** How `replay` and the other commands find a running listen. */
    listen: join(dir, 'listen.json'),
  };
}

export type FolderFiles = ReturnType<typeof folderFiles>;
