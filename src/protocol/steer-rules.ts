/**
 * The steering rules the site steer panel checks with (window.EmsPartnerSteerRules): the runtime's own,
 * nothing else. `npm run build` bundles this module and the protocol modules it imports (pure, no I/O)
 * into resources/steer-rules.js (scripts/copy-editor.js); src/nodes/site-steer/panel.ts reads exactly
 * these: the site list, the portfolio split, each mode's rows, the node's power limits, the grid limits.
 */
export { parseSiteList, portfolioSplitOf } from './portfolio';
export { STEER_MODES, checkPowerLimits, panelRows } from './steer-modes';
export { parseGridLimits } from './grid-limits';
