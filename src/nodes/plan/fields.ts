/**
 * The fields the `ems-plan` node reads: its settings (PlanProps), the fields a message's battery
 * and payload may set, and the node's settings behind the price formulas and the site's limits.
 * Pure, no imports: the build serves it (through check.ts) to the editor in resources/plan-input.js.
 */
type Value = string | number | boolean | undefined | null;

export interface PlanProps {
  name?: string;
  capacityKWh?: Value;
  maxChargeKW?: Value;
  maxDischargeKW?: Value;
  socMin?: Value;
  socMax?: Value;
  efficiency?: Value;
  socEnd?: Value;
  priceUnit?: Value;
  steps?: Value;
  // version 2
  chargeEfficiency?: Value;
  dischargeEfficiency?: Value;
  cycleCost?: Value;
  endValue?: Value;
  socTarget?: Value;
  socTargetTime?: Value;
  importMultiplier?: Value;
  importFee?: Value;
  importVat?: Value;
  exportMultiplier?: Value;
  exportFee?: Value;
  exportVat?: Value;
  importLimitKW?: Value;
  exportLimitKW?: Value;
  peakCost?: Value;
  replan?: Value;
  // version 3: slots whose battery just follows PV and load left to the site ('self-consumption') or steered ('steer')
  idle?: Value;
  // version 4: false = never charge from the grid / never discharge into it
  gridCharge?: Value;
  gridDischarge?: Value;
  sellSocMin?: Value;
}

/** The battery fields a message may set (msg.battery, msg.payload.battery). */
export const BATTERY_KEYS = [
  'capacityKWh',
  'maxChargeKW',
  'maxDischargeKW',
  'socMin',
  'socMax',
  'efficiency',
  'soc',
  'chargeEfficiency',
  'dischargeEfficiency',
  'cycleCost',
  'socTarget',
  'endValue',
  'gridCharge',
  'gridDischarge',
  'sellSocMin',
] as const;
/** The fields of an object msg.payload. */
export const PAYLOAD_KEYS = [
  'prices',
  'battery',
  'soc',
  'socEnd',
  'priceUnit',
  'steps',
  'currency',
  'slotMinutes',
  'importFormula',
  'exportFormula',
  'pvForecast',
  'loadForecast',
  'loadHistory',
  'gridImportMax',
  'gridExportMax',
  'site',
  'solver',
] as const;
/** The planner fields msg.X may set (before msg.payload.X); the node's settings give socEnd, priceUnit and steps. */
export const MSG_KEYS = PAYLOAD_KEYS.filter(
  (k) => !['prices', 'battery', 'soc', 'site', 'importFormula', 'exportFormula'].includes(k),
);
export const NODE_PLAN_KEYS = ['socEnd', 'priceUnit', 'steps'];
/** The node's price formula settings, per formula and key. */
export const FORMULA_PROPS: Record<string, Record<string, keyof PlanProps>> = {
  importFormula: { multiplier: 'importMultiplier', fee: 'importFee', vat: 'importVat' },
  exportFormula: { multiplier: 'exportMultiplier', fee: 'exportFee', vat: 'exportVat' },
};
/** The site's limits: the planner's key (W, per kW) and the node's setting (kW) with its factor to the planner's unit. */
export const SITE_PROPS: Record<string, [keyof PlanProps | undefined, number]> = {
  importLimitW: ['importLimitKW', 1000],
  exportLimitW: ['exportLimitKW', 1000],
  peakCost: ['peakCost', 1],
  peakSoFarW: [undefined, 1],
};
