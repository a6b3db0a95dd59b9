/**
 * The set-up of a browser suite (test/browser), in one call: what a describe block needs before
 * its first test (Node-RED, Chromium, the editor loaded and its palette ready), the clean-up
 * after a failed test (open trays and dialogs cancelled, so the next test starts from the
 * canvas) and the teardown. The pieces themselves are in test/browser/lib/.
 *
 * - `useEditor()`: the Node-RED and Chromium that all browser files share (lib/session.ts),
 *   with an empty deployed flow and a freshly loaded editor.
 * - `useDemo()`: `npm start` (lib/demo.ts) and a Chromium of the suite's own, both stopped after it.
 */
import type { Page } from 'playwright-core';
import { launch, type BrowserSession } from '../browser/lib/browser';
import { startDemo, type Demo } from '../browser/lib/demo';
import { cancelTrays, openEditor } from '../browser/lib/editor';
import { freshEditor, type Session } from '../browser/lib/session';

export type { Session };

/** What `useDemo()` hands its suite. */
export interface DemoSession {
  demo: Demo;
  browser: BrowserSession;
  page: Page;
}

/** After a failed test: cancels the trays and dialogs it left open on `page`. */
function cancelAfterFailure(page: () => Page | undefined): void {
  afterEach(async function () {
    const current = page();
    if (this.currentTest?.state === 'failed' && current) await cancelTrays(current).catch(() => undefined);
  });
}

/**
 * The shared session for a describe block: before it, an empty deployed flow and the editor
 * (re)loaded, handed to `ready` (which may set up more, e.g. deploy a flow); after a failed
 * test, open trays cancelled. The session itself stops after the last browser file.
 */
export function useEditor(ready: (s: Session) => void | Promise<void>): void {
  let page: Page | undefined;
  before(async function () {
    const session = await freshEditor();
    page = session.browser.page;
    await ready(session);
  });
  cancelAfterFailure(() => page);
}

/**
 * `npm start` and a Chromium (en-US) for a describe block: before it, both started and (unless
 * `editor: false`) the editor loaded, handed to `ready`; after a failed test, open trays
 * cancelled; after the block, the browser closed and npm start stopped.
 */
export function useDemo(ready: (d: DemoSession) => void | Promise<void>, opts: { editor?: boolean } = {}): void {
  let demo: Demo | undefined;
  let browser: BrowserSession | undefined;
  before(async function () {
    demo = await startDemo();
    browser = await launch('en-US');
    if (opts.editor !== false) await openEditor(browser.page, `${demo.base}/`);
    await ready({ demo, browser, page: browser.page });
  });
  if (opts.editor !== false) cancelAfterFailure(() => browser?.page);
  after(async function () {
    await browser?.close();
    await demo?.stop();
  });
}

/** Pixels of a chart's canvas (the first canvas under `selector`) within 40 of an RGB colour, opaque. */
export function colourPixels(page: Page, selector: string, rgb: readonly number[]): Promise<number> {
  return page
    .locator(`${selector} canvas`)
    .first()
    .evaluate(
      (c, rgb) => {
        const canvas = c as HTMLCanvasElement;
        const pixels = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
        let count = 0;
        for (let i = 0; i < pixels.length; i += 4) {
          if (
            pixels[i + 3] > 200 &&
            Math.abs(pixels[i] - rgb[0]) < 40 &&
            Math.abs(pixels[i + 1] - rgb[1]) < 40 &&
            Math.abs(pixels[i + 2] - rgb[2]) < 40
          )
            count++;
        }
        return count;
      },
      [...rgb],
    );
}
