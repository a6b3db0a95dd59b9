/**
 * The upgrade steps of ems-time-series's saved properties, in order of version. The machinery and
 * the one table of every node type are ../shared/migrations.ts; the editor gets these steps
 * bundled into resources/migrations.js, so this file imports only ../shared/migration-step.
 */
import { withDefaults, type Migration } from '../shared/migration-step';

export const STEPS: readonly Migration[] = [
  // 0.2.0: messages per split.
  { version: 2, up: (c) => withDefaults(c, { maxSplit: 1000 }) },
];
