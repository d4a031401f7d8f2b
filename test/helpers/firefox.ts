import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';

/** Debian's Firefox ESR (installed by .ci/run when missing). */
export const FIREFOX = process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr';

/** Nothing at start-up that would reach for the network (this machine has none) or open a first-run page. */
const PREFS = `
user_pref("browser.startup.page", 0);
user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("app.update.disabledForTesting", true);
user_pref("browser.aboutwelcome.enabled", false);
`;

export interface Firefox {
  /** Loads `url` in the one tab and waits for its load event. */
  navigate(url: string): Promise<void>;
  /** Evaluates `expression` in the page (awaiting a promise) and gives back its value, which must be a string. */
  evaluate(expression: string): Promise<string>;
  /** Sets the size of the page's viewport, in CSS pixels. */
  setViewport(width: number, height: number): Promise<void>;
  /** The page's viewport as a PNG. */
  screenshot(): Promise<Buffer>;
  /** Messages the page logged as errors, and its uncaught exceptions. */
  readonly errors: string[];
  close(): Promise<void>;
}

/**
 * Firefox headless, driven over WebDriver BiDi, the W3C protocol Firefox speaks itself (playwright-core
 * drives only its own patched Firefox, which cannot be downloaded here): commands and answers are JSON
 * over one WebSocket, so `ws` is all a test needs.
 */
export async function launchFirefox(): Promise<Firefox> {
  try {
    return await launchOnce();
  } catch (error) {
    // Rarely (once in a full run; never in 50 starts in a row, with or without busy cores) Firefox
    // prints its headless banner and then nothing, for good. Its start-up is not what these tests are
    // about, so a hung one gets one more try, with a fresh profile, and says so.
    if (!(error instanceof StartupHang)) throw error;
    console.warn(`${error.message}\nStarting Firefox once more.`);
    return launchOnce();
  }
}

class StartupHang extends Error {}

async function launchOnce(): Promise<Firefox> {
  const profile = await mkdtemp(join(tmpdir(), 'clockhook-firefox-'));
  await writeFile(join(profile, 'user.js'), PREFS);
  const child = spawn(FIREFOX, ['--headless', '--no-remote', '--profile', profile, '--remote-debugging-port=0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const quit = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill();
      // A hung Firefox may not heed SIGTERM.
      const stubborn = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(stubborn);
    }
    await rm(profile, { recursive: true, force: true });
  };
  try {
    const socket = new WebSocket(`${await remoteAddress(child)}/session`);
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    return await startSession(socket, async () => {
      socket.close();
      await quit();
    });
  } catch (error) {
    await quit();
    throw error;
  }
}

/** How long Firefox may take to listen: ~0.5 s here, ~1 s with both cores busy. */
const START_MS = 20_000;

/** The BiDi address Firefox prints once it listens ("WebDriver BiDi listening on ws://127.0.0.1:PORT"). */
function remoteAddress(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let printed = '';
    const timer = setTimeout(
      () => reject(new StartupHang(`Firefox did not start its remote agent within ${START_MS / 1000} s:\n${printed}`)),
      START_MS,
    );
    child.stderr?.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
      const address = /WebDriver BiDi listening on (ws:\/\/\S+)/.exec(printed)?.[1];
      if (address) {
        clearTimeout(timer);
        resolve(address);
      }
    });
    const fail = (error: Error) => {
      clearTimeout(timer);
      reject(error);
    };
    child.once('error', fail);
    child.once('exit', (code) => fail(new Error(`Firefox exited (${code}) before it listened:\n${printed}`)));
  });
}

async function startSession(socket: WebSocket, close: () => Promise<void>): Promise<Firefox> {
  const waiting = new Map<number, { resolve: (result: any) => void; reject: (error: Error) => void }>();
  const errors: string[] = [];
  let lastId = 0;
  socket.on('message', (data) => {
    const message = JSON.parse(String(data));
    if (message.type === 'event' && message.method === 'log.entryAdded' && message.params.level === 'error')
      errors.push(message.params.text);
    const call = waiting.get(message.id);
    if (!call) return;
    waiting.delete(message.id);
    if (message.type === 'error') call.reject(new Error(`${message.error}: ${message.message}`));
    else call.resolve(message.result);
  });
  socket.on('close', () => {
    for (const call of waiting.values()) call.reject(new Error('Firefox closed its WebDriver BiDi connection'));
    waiting.clear();
  });
  const send = (method: string, params: object): Promise<any> =>
    new Promise((resolve, reject) => {
      lastId += 1;
      waiting.set(lastId, { resolve, reject });
      socket.send(JSON.stringify({ id: lastId, method, params }));
    });

  await send('session.new', { capabilities: {} });
  await send('session.subscribe', { events: ['log.entryAdded'] });
  const context: string = (await send('browsingContext.getTree', {})).contexts[0].context;
  return {
    errors,
    async navigate(url) {
      await send('browsingContext.navigate', { context, url, wait: 'complete' });
    },
    async evaluate(expression) {
      const answer = await send('script.evaluate', { expression, target: { context }, awaitPromise: true });
      if (answer.type === 'exception') throw new Error(`in the page: ${answer.exceptionDetails.text}`);
      if (answer.result.type !== 'string')
        throw new Error(`in the page: ${expression} gave a ${answer.result.type}, not a string`);
      return answer.result.value as string;
    },
    async setViewport(width, height) {
      await send('browsingContext.setViewport', { context, viewport: { width, height } });
    },
    async screenshot() {
      return Buffer.from((await send('browsingContext.captureScreenshot', { context })).data, 'base64');
    },
    close,
  };
}
