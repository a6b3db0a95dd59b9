/**
 * The upgrade steps of ems-schedule's saved properties, in order of version (see
 * ../shared/migrations.ts; bundled for the editor into resources/migrations.js, so this file
 * imports only ../shared/migration-step). A schedule saved without a version is version 1.
 */
import { keepNoLimit, type Migration } from '../shared/migration-step';

export const STEPS: readonly Migration[] = [
  // Power limits on by default: an empty limit is now the site's rating, so a limit this flow
  // had off (not set, empty or 0) becomes "none" and stays off (the node warns at deploy).
  { version: 2, up: keepNoLimit },
];
