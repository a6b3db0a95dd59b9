/**
 * What the site steer node's editor panel checks with: the runtime's own rules, nothing else.
 * `npm run build` bundles this module and the protocol modules it imports (pure, no I/O) into
 * resources/steer-rules.js (scripts/copy-editor.js), window.EmsPartnerSteerRules, which the site
 * steer panel (src/nodes/site-steer/panel.ts, built into resources/site-steer-panel.js) reads:
 * the site list (parseSiteList), the rows of each mode (panelRows, from MODE_COMPONENTS), the
 * node's power limits (checkPowerLimits), the portfolio split (portfolioSplitOf), the grid limits
 * (parseGridLimits: within maxGridLimit, lower not above upper) and the unit factors (toWatts).
 * The unit lists are in limits.ts (resources/limits.js).
 */
export { parseSiteList, portfolioSplitOf } from './portfolio';
export { MODE_COMPONENTS, STEER_MODES, checkPowerLimits, panelRows } from './steer-modes';
export { toWatts } from './units';
export { parseGridLimits } from './grid-limits';
