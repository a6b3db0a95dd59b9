/**
 * Driving the Node-RED editor the way a user does: palette drag and drop, double-click to
 * open a node, the tray's Done/Cancel, the Deploy button, sidebars. Selectors are Node-RED
 * 4's own; the node under test is found by its id on the canvas.
 */
import * as assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';
import { until } from './wait';

export const TYPES = ['ems-device-read', 'ems-time-series', 'ems-site-steer'] as const;

/** Loads the editor and waits until the palette shows this package's nodes. */
export async function openEditor(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page
    .locator('.red-ui-palette-node[data-palette-type="ems-site-steer"]')
    .waitFor({ state: 'attached', timeout: 30000 });
  await page.waitForFunction(() => typeof RED !== 'undefined' && RED.workspaces && RED.workspaces.active());
  await page
    .locator('#red-ui-loading')
    .waitFor({ state: 'hidden' })
    .catch(() => undefined);
}

export function paletteNode(page: Page, type: string): Locator {
  return page.locator(`.red-ui-palette-node[data-palette-type="${type}"]`);
}

/** Narrows the palette to what matches `text` (the palette's own filter box). */
export async function filterPalette(page: Page, text: string): Promise<void> {
  const input = page.locator('#red-ui-palette-search input');
  await input.fill(text);
  await input.press('End');
}

/** Ids of the flow nodes (not config nodes) on the canvas. */
export function nodeIds(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const ids: string[] = [];
    RED.nodes.eachNode((n: { id: string }) => {
      ids.push(n.id);
    });
    return ids;
  });
}

/** Drags a node from the palette onto the canvas at (x, y) of the workspace; returns its id. */
export async function dropNode(page: Page, type: string, x: number, y: number): Promise<string> {
  const before = new Set(await nodeIds(page));
  await paletteNode(page, type).scrollIntoViewIfNeeded();
  await paletteNode(page, type).dragTo(page.locator('#red-ui-workspace-chart'), { targetPosition: { x, y } });
  let added: string[] = [];
  await until(
    async () => (added = (await nodeIds(page)).filter((id) => !before.has(id))).length,
    (n) => n === 1,
    `a ${type} node on the canvas`,
  );
  return added[0];
}

export function canvasNode(page: Page, id: string): Locator {
  return page.locator(`#red-ui-workspace-chart g.red-ui-flow-node-group[id="${id}"]`);
}

/** Opens a node's edit tray by double-clicking it on the canvas. */
export async function openNode(page: Page, id: string): Promise<void> {
  await canvasNode(page, id).locator('rect.red-ui-flow-node').dblclick();
  // On a loaded machine the two clicks can land too far apart to count as a double-click (seen
  // once in a full run, right after a tray closed): then open it as the double-click would.
  const opened = await page
    .locator('#node-dialog-ok')
    .waitFor({ state: 'visible', timeout: 5000 })
    .then(
      () => true,
      () => false,
    );
  if (opened) await trayShown(page);
  else await editNode(page, id);
}

/** Opens a node's edit tray as the editor's own double-click does (RED.editor.edit). */
export async function editNode(page: Page, id: string): Promise<void> {
  await page.evaluate((nodeId) => {
    if (!$('#node-dialog-ok').length) RED.editor.edit(RED.nodes.node(nodeId));
  }, id);
  await trayShown(page);
}

/**
 * Waits until a node's edit tray is open and at rest: its buttons (the pencil beside Server, say)
 * take clicks only once the tray stops sliding in.
 */
async function trayShown(page: Page): Promise<void> {
  await page.locator('#node-dialog-ok').waitFor({ state: 'visible' });
  await trayIdle(page);
  await trayAtRest(page);
}

/** Waits until no edit tray is sliding in or out. */
export async function trayIdle(page: Page): Promise<void> {
  await page.waitForFunction(
    () => !$('.red-ui-tray').is(':animated') && !$('.red-ui-editor').hasClass('red-ui-tray-animating'),
  );
}

/** Cancels every open dialog and edit tray (after a failed test). */
export async function cancelTrays(page: Page): Promise<void> {
  const dialogCancel = page.locator('#red-ui-clipboard-dialog-cancel:visible');
  if (await dialogCancel.count()) await dialogCancel.click();
  for (let i = 0; i < 5 && (await page.locator('.red-ui-tray').count()) > 0; i++) {
    await page
      .locator('#node-config-dialog-cancel, #node-dialog-cancel')
      .first()
      .click({ timeout: 2000 })
      .catch(() => undefined);
    await trayIdle(page);
  }
}

/** Closes the topmost tray with Done (or Cancel) and waits for it to go. */
export async function closeTray(page: Page, how: 'ok' | 'cancel' = 'ok'): Promise<void> {
  // Node-RED detaches the trays underneath the top one, so the top one is the config tray if it exists.
  const config = (await page.locator('#node-config-dialog-ok').count()) > 0;
  const button = config ? `#node-config-dialog-${how}` : `#node-dialog-${how}`;
  await page.locator(button).click();
  await page.locator(config ? '#node-config-dialog-ok' : '#node-dialog-ok').waitFor({ state: 'detached' });
  await trayIdle(page);
}

/** The text box of a TypedInput whose hidden input has the given id. */
export function typedText(page: Page, id: string): Locator {
  return page.locator(`#${id} + .red-ui-typedInput-container input.red-ui-typedInput-input`);
}

/** The visible container of a TypedInput (carries .input-error when invalid). */
export function typedContainer(page: Page, id: string): Locator {
  return page.locator(`#${id} + .red-ui-typedInput-container`);
}

/** Chooses a TypedInput's type from its menu, by the entry's label (e.g. 'number', 'JSON'); `input` is the id or the container. */
export async function chooseType(page: Page, input: string | Locator, label: string): Promise<void> {
  const container = typeof input === 'string' ? typedContainer(page, input) : input;
  await container.locator('button.red-ui-typedInput-type-select').click();
  await page.locator('.red-ui-typedInput-options:visible a', { hasText: new RegExp(`^\\s*${label}\\s*$`) }).click();
}

/** Sets the first property row of an open inject node: msg.payload of the given TypedInput type and value. */
export async function setInjectPayload(page: Page, typeLabel: string, value: string): Promise<void> {
  const row = page.locator('#node-input-property-container > li').first();
  assert.equal(
    await row
      .locator('.node-input-prop-property-name + .red-ui-typedInput-container input.red-ui-typedInput-input')
      .inputValue(),
    'payload',
  );
  const value$ = row.locator('.node-input-prop-property-value + .red-ui-typedInput-container');
  await chooseType(page, value$, typeLabel);
  await value$.locator('input.red-ui-typedInput-input').fill(value);
}

/** Values and labels of a <select>. */
export function options(
  page: Page,
  selector: string,
): Promise<Array<{ value: string; label: string; selected: boolean }>> {
  return page.locator(`${selector} option`).evaluateAll((els) =>
    (els as HTMLOptionElement[]).map((o) => ({
      value: o.value,
      label: (o.textContent ?? '').trim(),
      selected: o.selected,
    })),
  );
}

/**
 * Clicks Deploy and waits for Node-RED's "Successfully deployed" notification. If Node-RED asks
 * to confirm (nodes not properly configured), that is an error unless `confirm` is set.
 */
export async function deploy(page: Page, opts: { confirm?: boolean } = {}): Promise<void> {
  // Notifications of earlier deploys may still be on screen: wait for a new one.
  await page.evaluate(() => $('.red-ui-notification-success').addClass('ems-test-seen'));
  await page.locator('#red-ui-header-button-deploy').click();
  const done = page.locator('.red-ui-notification-success:not(.ems-test-seen)').first();
  const ask = page.locator('#red-ui-deploy-dialog-confirm-deploy-deploy');
  await done.or(ask).first().waitFor({ state: 'visible' });
  if (await ask.isVisible()) {
    const text = await page.locator('.red-ui-notification', { has: ask }).innerText();
    if (!opts.confirm) throw new Error(`Node-RED asked to confirm the deploy: ${text}`);
    await ask.click();
    await done.waitFor({ state: 'visible' });
  }
  await until(
    () => page.evaluate(() => RED.nodes.dirty()),
    (d) => d === false,
    'the workspace to be clean after deploy',
  );
}

/** Shows a sidebar tab ('debug', 'help', 'info', 'config'). */
export async function showSidebar(page: Page, tab: string): Promise<Locator> {
  // With many tabs Node-RED shows them as icon buttons; otherwise as labelled tabs.
  const button = page.locator(`#red-ui-tab-${tab}-link-button`);
  await ((await button.isVisible()) ? button : page.locator(`#red-ui-tab-${tab} a.red-ui-tab-label`)).click();
  const content = page.locator('#red-ui-sidebar-content');
  await content.waitFor({ state: 'visible' });
  return content;
}

/** Drags a wire from the output port of one node to the input port of another. */
export async function wire(page: Page, fromId: string, toId: string): Promise<void> {
  const from = await canvasNode(page, fromId)
    .locator('.red-ui-flow-port-output .red-ui-flow-port')
    .first()
    .boundingBox();
  const to = await canvasNode(page, toId).locator('.red-ui-flow-port-input .red-ui-flow-port').first().boundingBox();
  if (!from || !to) throw new Error('ports not visible');
  await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
  await page.mouse.down();
  await page.mouse.move((from.x + to.x) / 2, (from.y + to.y) / 2, { steps: 5 });
  await page.mouse.move(to.x + to.width / 2, to.y + to.height / 2, { steps: 5 });
  await page.mouse.up();
  await until(
    () =>
      page.evaluate(([a, b]) => RED.nodes.filterLinks({ source: { id: a }, target: { id: b } }).length, [fromId, toId]),
    (n) => n === 1,
    `a wire ${fromId} -> ${toId}`,
  );
}

/**
 * Opens the config tray from an open flow-node panel: the plus (`add`) or the pencil (`edit`)
 * beside Server; the config tray stays open.
 *
 * In one CI run the pencil's click opened nothing (15 s later, no config tray). openNode() now
 * waits for the node's tray to stop sliding in before anything clicks in it; should a click still
 * be lost on a loaded machine, it is repeated, three clicks at most. A click that did open the
 * tray is never repeated: the second click waits until the first has had 5 s to show it.
 */
async function openServerTray(page: Page, how: 'add' | 'edit'): Promise<void> {
  const ok = page.locator('#node-config-dialog-ok');
  for (let attempt = 1; ; attempt++) {
    await page.locator(`#node-input-btn-server-${how}`).click();
    const opened = await ok.waitFor({ state: 'visible', timeout: 5000 }).then(
      () => true,
      () => false,
    );
    if (opened) break;
    if (attempt === 3) {
      const state = await page.evaluate(
        (b) => ({ trays: $('.red-ui-tray').length, button: $(b).length, visible: $(b).is(':visible') }),
        `#node-input-btn-server-${how}`,
      );
      throw new Error(`the config tray did not open after 3 clicks on the ${how} button: ${JSON.stringify(state)}`);
    }
  }
  await page.locator('#node-config-input-simulator').waitFor({ state: 'visible' });
  await trayIdle(page);
  // Still sliding in, its buttons are off screen: a click then scrolls the (tall) form to reach them.
  await trayAtRest(page);
}

/** Adds a config node from an open flow-node panel (the plus beside Server); the config tray stays open. */
export function openServerAdd(page: Page): Promise<void> {
  return openServerTray(page, 'add');
}

/** Edits the selected config node from an open flow-node panel (the pencil beside Server); the config tray stays open. */
export function openServerEdit(page: Page): Promise<void> {
  return openServerTray(page, 'edit');
}

/** Id of the only config node of this package in the workspace. */
export async function configId(page: Page): Promise<string> {
  const ids = await page.evaluate(() => {
    const found: string[] = [];
    RED.nodes.eachConfig((c: { id: string; type: string }) => {
      if (c.type === 'ems-partner-config') found.push(c.id);
    });
    return found;
  });
  if (ids.length !== 1) throw new Error(`expected one ems-partner-config, found ${ids.length}`);
  return ids[0];
}

/** The saved properties of a node in the editor. */
export function nodeProps(page: Page, id: string): Promise<Record<string, unknown>> {
  return page.evaluate((id) => {
    const node = RED.nodes.node(id);
    const state: Record<string, unknown> = { valid: node.valid };
    for (const k of Object.keys(node._def.defaults)) state[k] = node[k];
    return state;
  }, id);
}

/**
 * Waits until the top edit tray has finished sliding in: Node-RED moves it with a CSS
 * transition on `right` (0.25 s) started a tick after the tray exists, so the Done button is
 * already "visible" (off screen) while it slides and trayIdle() sees no jQuery animation.
 * Screenshots of a tray need it at rest.
 */
export async function trayAtRest(page: Page): Promise<void> {
  let last = '';
  await until(
    () =>
      page
        .locator('.red-ui-tray')
        .last()
        .evaluate((e) => {
          const rect = e.getBoundingClientRect();
          const resting =
            e.getAnimations().length === 0 && getComputedStyle(e).right === '0px' && rect.right <= window.innerWidth;
          return resting ? `${rect.x},${rect.y},${rect.width},${rect.height}` : '';
        }),
    (box) => {
      const still = box !== '' && box === last;
      last = box;
      return still;
    },
    'the edit tray at rest',
  );
}

/** Waits until Node-RED's notifications ("Successfully deployed", "Imported: …") have gone by themselves. */
export async function notificationsGone(page: Page, timeoutMs = 20000): Promise<void> {
  await until(
    () => page.locator('#red-ui-notifications .red-ui-notification:visible').count(),
    (n) => n === 0,
    'the notifications to go',
    timeoutMs,
  );
}
