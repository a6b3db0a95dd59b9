/**
 * One Node-RED process and one Chromium shared by every browser test file: started by the
 * first `before` that asks for it, stopped by a root-level `after` hook (registered when this
 * module is loaded, so it runs once after all suites). Each suite starts from an empty
 * deployed flow and a freshly loaded editor.
 */
import { launch, type BrowserSession } from './browser';
import { setFlows, startNodeRed, type NodeRedProcess } from './node-red';
import { openEditor } from './editor';

export interface Session {
  nr: NodeRedProcess;
  browser: BrowserSession;
}

let current: Promise<Session> | undefined;

async function start(): Promise<Session> {
  const nr = await startNodeRed();
  try {
    return { nr, browser: await launch('en-US') };
  } catch (err) {
    await nr.stop();
    throw err;
  }
}

/** The shared session, with an empty deployed flow and the editor (re)loaded. */
export async function freshEditor(): Promise<Session> {
  if (!current) current = start();
  const ready = await current;
  await setFlows(ready.nr, []);
  await openEditor(ready.browser.page, ready.nr.url);
  return ready;
}

/** The shared session as it is (started if needed). */
export function session(): Promise<Session> {
  if (!current) current = start();
  return current;
}

after(async function () {
  if (!current) return;
  this.timeout(30000);
  const ready = await current.catch(() => undefined);
  current = undefined;
  if (!ready) return;
  await ready.browser.close().catch(() => undefined);
  await ready.nr.stop();
});
