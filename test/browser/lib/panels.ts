/**
 * What each edit panel must show: for each setting of its mode selects, the fields (control id
 * without `node-input-`, and the key of the label under `<type>.label`) that are visible, and
 * those that are hidden. Labels are read from the locale catalogues, so a test checks that the
 * page shows the translated text and not a raw key.
 */
import * as fs from 'node:fs';
import type { Page } from 'playwright-core';
import { localeFile } from '../../helpers/node-files';

export interface PanelView {
  /** Selects to set first: control id -> option value. */
  set: Record<string, string>;
  visible: Array<[id: string, labelKey: string]>;
  hidden?: string[];
}

const SERVER: [string, string] = ['server', 'server'];
const NAME: [string, string] = ['name', 'name'];

export const PANELS: Record<string, PanelView[]> = {
  'ems-device-read': [
    {
      set: { mode: 'map' },
      visible: [
        SERVER,
        ['mode', 'mode'],
        ['device', 'device'],
        ['device-picker', 'pick'],
        ['properties', 'properties'],
        ['properties-list', 'available'],
        ['split', 'split'],
        ['interval', 'interval'],
        ['onlyChanges', 'onlyChanges'],
        NAME,
      ],
    },
    {
      set: { mode: 'single' },
      visible: [
        ['device', 'device'],
        ['properties', 'properties'],
      ],
      hidden: ['split'],
    },
    {
      set: { mode: 'devices' },
      visible: [SERVER, ['interval', 'interval'], NAME],
      hidden: ['device', 'properties', 'split'],
    },
  ],
  'ems-time-series': [
    {
      set: { range: 'last' },
      visible: [
        SERVER,
        ['device', 'device'],
        ['device-picker', 'pick'],
        ['property', 'property'],
        ['property-picker', 'pick'],
        ['range', 'range'],
        ['last', 'last'],
        ['lastUnit', 'last'],
        ['resolution', 'resolution'],
        ['output', 'output'],
        NAME,
      ],
      hidden: ['start', 'end'],
    },
    {
      set: { range: 'absolute' },
      visible: [
        ['start', 'start'],
        ['end', 'end'],
      ],
      hidden: ['last'],
    },
  ],
  'ems-site-steer': [
    {
      set: { mode: 'ess', validity: 'quarter-hour' },
      visible: [
        SERVER,
        ['site', 'site'],
        ['site-picker', 'pick'],
        ['mode', 'mode'],
        ['essValue', 'ess'],
        ['essUnit', 'ess'],
        ['validity', 'validity'],
        ['maxEssPower', 'maxEssPower'],
        ['renew', 'renew'],
        ['dryRun', 'dryRun'],
        NAME,
      ],
      hidden: [
        'curtailmentValue',
        'maximizeGridImport',
        'gridTargetValue',
        'deadbandValue',
        'duration',
        'maxCurtailment',
      ],
    },
    {
      set: { mode: 'curtailment' },
      visible: [
        ['curtailmentValue', 'curtailment'],
        ['curtailmentUnit', 'curtailment'],
        ['maxCurtailment', 'maxCurtailment'],
      ],
      hidden: ['essValue', 'gridTargetValue'],
    },
    {
      set: { mode: 'combined' },
      visible: [
        ['essValue', 'ess'],
        ['curtailmentValue', 'curtailment'],
        ['maximizeGridImport', 'maximizeGridImport'],
      ],
      hidden: ['gridTargetValue', 'deadbandValue'],
    },
    {
      set: { mode: 'grid-target', validity: 'duration' },
      visible: [
        ['gridTargetValue', 'gridTarget'],
        ['gridTargetUnit', 'gridTarget'],
        ['deadbandValue', 'deadband'],
        ['deadbandUnit', 'deadband'],
        ['duration', 'duration'],
      ],
      hidden: ['essValue', 'curtailmentValue', 'maximizeGridImport'],
    },
  ],
};

/** A node type's message catalogue for a language ('en-US' or 'de'). */
export function catalogue(type: string, lang = 'en-US'): Record<string, any> {
  const file = localeFile(lang, type, 'json');
  return JSON.parse(fs.readFileSync(file, 'utf8'))[type];
}

/** The label for a control: the text of the row's <label> (for a select beside a TypedInput, the TypedInput's label). */
export function labelFor(page: Page, id: string): Promise<string | null> {
  return page.evaluate((id) => {
    const el = document.getElementById(`node-input-${id}`);
    if (!el) return null;
    const label =
      document.querySelector(`label[for="node-input-${id}"]`) ?? el.closest('.form-row')?.querySelector('label');
    return label ? (label as HTMLElement).innerText.trim() : null;
  }, id);
}

/** Whether a control is shown: the element itself, or the TypedInput that replaced it. */
export function controlVisible(page: Page, id: string): Promise<boolean> {
  return page.evaluate((id) => {
    const el = document.getElementById(`node-input-${id}`);
    if (!el) return false;
    const next = el.nextElementSibling;
    const shown = (e: Element) => !!(e as HTMLElement).offsetParent && (e as HTMLElement).getClientRects().length > 0;
    return next && next.classList.contains('red-ui-typedInput-container') ? shown(next) : shown(el);
  }, id);
}
