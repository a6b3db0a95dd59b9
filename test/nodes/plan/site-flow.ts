/**
 * The `ems-plan` node with the site model as the editor saves it at version 2, shared by the site
 * model's node tests.
 */

/** A node at version 2 as the editor saves it: a 10 kWh / 5 kW battery, the new settings empty. */
export const planNode = (extra: Record<string, unknown> = {}) => ({
  type: 'ems-plan',
  name: '',
  capacityKWh: '10',
  maxChargeKW: '5',
  maxDischargeKW: '',
  socMin: '10',
  socMax: '90',
  efficiency: '0.9',
  socEnd: '',
  priceUnit: 'kWh',
  steps: '',
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
  version: 2,
  ...extra,
});
