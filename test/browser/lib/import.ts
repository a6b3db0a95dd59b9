/**
 * Importing flows the way a user does: Menu ▸ Import ▸ Examples ▸ <module> ▸ <example> ▸
 * Import, to a new flow; an example brings its tab, which is then shown (nodes without a tab
 * follow the mouse until a click on the canvas places them). Node-RED answers an import whose node ids already exist in the workspace with a
 * notification ("Some of the nodes you are importing already exist in your workspace.") instead
 * of importing.
 */
import type { Locator, Page } from 'playwright-core';
import { until } from './wait';

/** The text of Node-RED's import-conflict notification (clipboard.import.conflictNotification1, en-US). */
export const CONFLICT_TEXT = /already exist/;

/** The import-conflict notification, when it is shown. */
export function conflictNotification(page: Page): Locator {
  return page.locator('.red-ui-notification', { hasText: CONFLICT_TEXT });
}

/** Whether each id is a node (flow, config) or tab of the editor's workspace. */
export function inWorkspace(page: Page, ids: string[]): Promise<boolean[]> {
  return page.evaluate((ids) => ids.map((id) => !!(RED.nodes.node(id) || RED.nodes.workspace(id))), ids);
}

/**
 * Imports an example of `module` by its title (the file name without .json) to a new flow.
 * Resolves with 'imported' once every id in `ids` is in the workspace and the nodes are placed,
 * or with 'conflict' when Node-RED showed its conflict notification instead (left open).
 */
export async function importExample(
  page: Page,
  module: string,
  title: string,
  ids: string[],
): Promise<'imported' | 'conflict'> {
  await page.locator('#red-ui-header-button-sidemenu').click();
  await page.locator('#menu-item-import').click();
  await page.locator('#red-ui-tab-red-ui-clipboard-dialog-import-tab-examples').click();
  const tree = page.locator('#red-ui-clipboard-dialog-import-tab-examples');
  const label = (text: string) =>
    tree.locator('.red-ui-treeList-label', {
      has: page.locator('.red-ui-treeList-label-text', { hasText: new RegExp(`^${escape(text)}$`) }),
    });
  const file = label(title);
  // The modules are folders; open this one unless it is open already.
  if (!(await file.isVisible())) await label(module).click();
  // The editor fetches the example when it is selected and enables Import once it has it; on a
  // busy machine a click while the tree still settles can select nothing, so select it again.
  for (let attempt = 1; ; attempt++) {
    await file.click();
    try {
      await page.waitForSelector('#red-ui-clipboard-dialog-ok:not([disabled])', { timeout: 5_000 });
      break;
    } catch (e) {
      if (attempt >= 3) throw e;
    }
  }
  await page.locator('#red-ui-clipboard-dialog-import-opt-new').click();
  // An import is one step of the editor's undo history; a refused one is none.
  const depth = await page.evaluate(() => RED.history.depth() as number);
  await page.locator('#red-ui-clipboard-dialog-ok').click();
  const outcome = await until(
    async () => {
      if (await conflictNotification(page).isVisible()) return 'conflict' as const;
      const added = await page.evaluate((d) => RED.history.depth() > d, depth);
      return added && (await inWorkspace(page, ids)).every(Boolean) ? ('imported' as const) : undefined;
    },
    (o) => o !== undefined,
    `the import of ${title}`,
  );
  if (outcome === 'imported') await place(page, ids);
  return outcome!;
}

/**
 * Shows the imported nodes: an example ships with its tab, which the import adds to the tab bar
 * (Node-RED does not switch to it): its tab is shown, as a user clicks it. Nodes imported without
 * a tab follow the mouse: they are placed on the new flow's canvas.
 */
async function place(page: Page, ids: string[]): Promise<void> {
  const tab = await page.evaluate((ids) => ids.find((id) => RED.nodes.workspace(id)), ids);
  if (tab) {
    await page.evaluate((id) => RED.workspaces.show(id), tab);
    await until(
      () => page.evaluate(() => RED.workspaces.active() as string),
      (active) => active === tab,
      `the tab ${tab}`,
    );
    return;
  }
  const chart = await page.locator('#red-ui-workspace-chart').boundingBox();
  if (!chart) throw new Error('the canvas is not visible');
  await page.mouse.move(chart.x + 120, chart.y + 80, { steps: 3 });
  await page.mouse.click(chart.x + 120, chart.y + 80);
}

/**
 * Answers the conflict notification (left open by importExample) as the README tells a user for a
 * config node that examples share: *View nodes…*, then *Import selected* with the conflicted config
 * nodes left unticked (Node-RED's default: the one in the workspace is kept and used). Resolves,
 * once every id in `ids` is in the workspace and the nodes are placed, with the ids Node-RED
 * listed unticked.
 */
export async function importKeepingExisting(page: Page, ids: string[]): Promise<string[]> {
  const note = conflictNotification(page);
  await note.locator('button', { hasText: /^View nodes/ }).click();
  // The notification closes (it fades out): gone before anything else looks for one.
  await until(
    () => note.count(),
    (n) => n === 0,
    'the conflict notification to close',
  );
  const gutters = page.locator(
    '#red-ui-clipboard-dialog-import-conflicts-list .red-ui-clipboard-dialog-import-conflicts-gutter input[type="checkbox"]',
  );
  await until(
    () => gutters.count(),
    (n) => n > 0,
    'the list of nodes to import',
  );
  const unticked = await gutters.evaluateAll((els) =>
    els.filter((e) => !(e as HTMLInputElement).checked).map((e) => e.getAttribute('data-node-id') ?? ''),
  );
  const depth = await page.evaluate(() => RED.history.depth() as number);
  await page.locator('#red-ui-clipboard-dialog-import-conflict').click();
  await until(
    async () =>
      (await page.evaluate((d) => RED.history.depth() > d, depth)) && (await inWorkspace(page, ids)).every(Boolean),
    (done) => done,
    'the import of the selected nodes',
  );
  await place(page, ids);
  return unticked;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
