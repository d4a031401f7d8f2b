// relay and listen --relay: relay.json, its token and the public URL kept for the next run.
import { saveRelayRecord } from '../../src/folder/index.js';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { channelFor, relayRecordFor } from '../../src/relay/index.js';
import { startListenProcess } from '../helpers/listen.js';
import { app, dir, listen, logs, procs, relay, relayOn, useRelayRig } from './relay-rig.js';

useRelayRig();

describe('relay and listen --relay: the record of the relay', () => {
  it('keeps the token in relay.json (0600) and derives the channel from it', async () => {
    const proc = await listen();
    const { readFile, stat } = await import('node:fs/promises');
    const file = join(dir.path, '.clockhook', 'relay.json');
    const record = JSON.parse(await readFile(file, 'utf8'));
    expect(record).toEqual({
      relay: relay.url,
      channel: channelFor(record.token),
      token: expect.stringMatching(/^[\w-]{43}$/),
      publicUrl: proc.ready.publicUrl,
    });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.stringify(logs)).not.toContain(record.token);
  });

  it('gives the public URL of a relay used before back, with its endpoint, after a run on another relay', async () => {
    const first = await listen();
    await first.stop();
    const other = await relayOn();
    try {
      const elsewhere = await startListenProcess(
        ['--relay', other.url, '--forward-to', app.url, '--print-secret'],
        dir.path,
      );
      procs.push(elsewhere);
      expect(elsewhere.ready.publicUrl.startsWith(`${other.url}/c/`)).toBe(true);
      await elsewhere.stop();
    } finally {
      await other.close();
    }
    const back = await listen();
    expect(back.ready.publicUrl).toBe(first.ready.publicUrl);
    // The endpoint kept for that URL is the one used again: the app's secret still holds.
    expect(back.ready.secret).toBe(first.ready.secret);
    const record = JSON.parse(await readFile(join(dir.path, '.clockhook', 'relay.json'), 'utf8'));
    expect(record).toMatchObject({
      relay: relay.url,
      publicUrl: first.ready.publicUrl,
      earlier: [{ relay: other.url }],
    });
    expect(record.earlier).toHaveLength(1);
  });

  it('keeps the record of a relay another listen of the folder saved meanwhile', async () => {
    const path = join(dir.path, 'relay.json');
    const mine = await relayRecordFor(path, 'http://relay-a.test/');
    const theirs = await relayRecordFor(path, 'http://relay-b.test');
    await saveRelayRecord(path, { ...theirs, publicUrl: 'http://relay-b.test/c/b' });
    await saveRelayRecord(path, { ...mine, publicUrl: 'http://relay-a.test/c/a' });
    expect(await relayRecordFor(path, 'http://relay-b.test/')).toEqual({
      ...theirs,
      publicUrl: 'http://relay-b.test/c/b',
    });
    expect(await relayRecordFor(path, 'http://relay-a.test')).toEqual({
      ...mine,
      relay: 'http://relay-a.test',
      publicUrl: 'http://relay-a.test/c/a',
    });
  });

  it('moves an unreadable relay.json aside, never over it, and says the public URL is a new one', async () => {
    const { readdir, writeFile } = await import('node:fs/promises');
    const folder = join(dir.path, '.clockhook');
    await mkdir(folder, { recursive: true });
    // A hand edit gone wrong: the token is still in it, the only way back to the URL it names.
    const mangled = '{"relay": "http://old", "token": "keep-me-0123456789abcdefghijklmnop",\n';
    await writeFile(join(folder, 'relay.json'), mangled);
    const proc = await listen();
    const [aside] = (await readdir(folder)).filter((name) => name.startsWith('relay.json.corrupt-'));
    expect(await readFile(join(folder, aside), 'utf8')).toBe(mangled);
    expect(proc.stderr).toContain(`.clockhook/relay.json could not be read (it is not valid JSON`);
    expect(proc.stderr).toContain(
      `moved it to ${join('.clockhook', aside)}. This run gets a new channel, so a new public URL: the token in that file keeps the old one if you mend it.`,
    );
    const record = JSON.parse(await readFile(join(folder, 'relay.json'), 'utf8'));
    expect(record).toMatchObject({ relay: relay.url, publicUrl: proc.ready.publicUrl });
  });
});
