/**
 * Migrations of saved node properties (src/nodes/shared/migrations.ts): each step of each node type,
 * idempotence, no change to values a flow already holds, and a synthetic later version (a
 * rename of site steer's `duration` to a test-only `durationMin`) through the same machinery.
 */
import assert from 'node:assert/strict';
import { migrate, upgrade, type NodeConfig } from '../../../src/nodes/shared/migrations';

/**
 * ems-plan came after 0.1.0 (version 1; example 09 shipped it without a version);
 * version 2 adds the site model's settings, empty (the planner's defaults), and
 * re-planning, off: a node saved before plans as it did. Version 3 adds `idle`, 'steer' for a
 * saved node (every slot steered, as before; a new node's default is 'self-consumption').
 */
const PLAN_V1: NodeConfig = {
  id: 'p1',
  type: 'ems-plan',
  z: 'tab',
  name: 'Home battery plan',
  capacityKWh: 20,
  maxChargeKW: 10,
  maxDischargeKW: 10,
  socMin: 10,
  socMax: 90,
  efficiency: 0.9,
  socEnd: '',
  priceUnit: 'EUR/MWh',
  steps: '',
  x: 100,
  y: 100,
  wires: [[]],
};
const PLAN_V2: NodeConfig = {
  chargeEfficiency: '',
  dischargeEfficiency: '',
  cycleCost: '',
  endValue: '',
  socTarget: '',
  socTargetTime: '',
  importMultiplier: '',
  importFee: '',
  importVat: '',
  exportMultiplier: '',
  exportFee: '',
  exportVat: '',
  importLimitKW: '',
  exportLimitKW: '',
  peakCost: '',
  replan: false,
};
const PLAN_V3: NodeConfig = { idle: 'steer' };
const PLAN_V4: NodeConfig = { gridCharge: true, gridDischarge: true, sellSocMin: '' };
/** A re-planning node as the release before version 3 saved it (example 12 of that release). */
const PLAN_SAVED_V2: NodeConfig = {
  ...PLAN_V1,
  ...PLAN_V2,
  cycleCost: 0.02,
  endValue: 0.1,
  importFee: 0.15,
  importVat: 1.19,
  exportMultiplier: 0,
  exportFee: 0.08,
  importLimitKW: 17,
  exportLimitKW: 7,
  replan: true,
  version: 2,
};

describe('migrations', () => {
  describe('ems-plan (after 0.1.0): version 1 to 4', () => {
    it('a node saved without a version (as example 09 shipped it) gets the new settings empty, re-planning off and every slot steered, nothing else changes', () => {
      const frozen = JSON.stringify(PLAN_V1);
      assert.deepEqual(migrate('ems-plan', PLAN_V1), { ...PLAN_V1, ...PLAN_V2, ...PLAN_V3, ...PLAN_V4, version: 4 });
      assert.equal(JSON.stringify(PLAN_V1), frozen, 'the argument is not changed');
      assert.deepEqual(migrate('ems-plan', { ...PLAN_V1, version: 1 }), {
        ...PLAN_V1,
        ...PLAN_V2,
        ...PLAN_V3,
        ...PLAN_V4,
        version: 4,
      });
    });

    it('values a flow already holds stay; idempotent; a current config is returned as it is', () => {
      const held = { ...PLAN_V1, importFee: '0.15', replan: true, exportLimitKW: 7, idle: 'self-consumption' };
      const after = migrate('ems-plan', held);
      assert.deepEqual(
        [after.importFee, after.replan, after.exportLimitKW, after.idle, (after as NodeConfig).version],
        ['0.15', true, 7, 'self-consumption', 4],
      );
      assert.equal(migrate('ems-plan', after), after);
      const node: NodeConfig = { ...PLAN_V1 };
      assert.deepEqual(
        upgrade(node).sort(),
        [...Object.keys(PLAN_V2), 'idle', 'gridCharge', 'gridDischarge', 'sellSocMin', 'version'].sort(),
      );
      assert.deepEqual(upgrade(node), []);
    });

    it('a re-planning node saved by version 2 goes to 4 with idle "steer" and grid charge and discharge on: it plans and steers every slot as it did', () => {
      const frozen = JSON.stringify(PLAN_SAVED_V2);
      assert.deepEqual(migrate('ems-plan', PLAN_SAVED_V2), { ...PLAN_SAVED_V2, idle: 'steer', ...PLAN_V4, version: 4 });
      assert.equal(JSON.stringify(PLAN_SAVED_V2), frozen, 'the argument is not changed');
      const node: NodeConfig = { ...PLAN_SAVED_V2 };
      assert.deepEqual(upgrade(node).sort(), ['gridCharge', 'gridDischarge', 'idle', 'sellSocMin', 'version']);
      assert.deepEqual([node.idle, node.gridCharge, node.gridDischarge, node.version], ['steer', true, true, 4]);
    });

    it('a node saved by the previous release (version 3) goes to 4 with grid charge and discharge on and no least SOC before selling only', () => {
      const saved: NodeConfig = { ...PLAN_SAVED_V2, idle: 'self-consumption', version: 3 };
      assert.deepEqual(migrate('ems-plan', saved), { ...saved, ...PLAN_V4, version: 4 });
      const node: NodeConfig = { ...saved };
      assert.deepEqual(upgrade(node).sort(), ['gridCharge', 'gridDischarge', 'sellSocMin', 'version']);
    });
  });
});
