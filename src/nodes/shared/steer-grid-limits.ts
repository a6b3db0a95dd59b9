/**
 * Grid-limits mode of the site-steer node (vendor notes): the rule itself is the
 * protocol's (src/protocol/grid-limits.ts: neither limit set, lowerLimit above upperLimit, a
 * limit beyond the node's maxGridLimit are refused before sending), where the editor checks
 * with it too (resources/steer-rules.js); the nodes reach it here, as they did.
 */
export { parseGridLimits } from '../../protocol';
