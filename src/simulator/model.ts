/**
 * The physical model of one site: load, PV, battery and grid meter. State advances lazily
 * from its last update to the requested instant in steps of at most one minute (longer when
 * a huge jump would need too many steps), split exactly at quarter-hour sample boundaries
 * and at steering changes, so expiries apply at the right instant. At every quarter-hour
 * boundary the exact instantaneous state is recorded for the time series.
 */
import { HOUR_MS, MINUTE_MS, QUARTER_HOUR_MS } from '../protocol/time';
import type { SiteState } from '../protocol/types';
import {
  F_BATT_IN,
  F_BATT_OUT,
  F_BATT_P,
  F_GRID_IN,
  F_GRID_OUT,
  F_GRID_P,
  F_PV_OUT,
  F_PV_P,
  F_SOC,
  N_FIELDS,
} from './fields';
import { dispatch, type Flows } from './dispatch';
import { hashString } from './prng';
import { loadW, pvPotentialW } from './profiles';
import type { SiteDefinition } from './sites';
import { SteeringStore } from './steering-store';
import { Baseline, History } from './timeseries';

/** Upper bound of integration steps per advance (a year is then ~35k quarter-hour steps). */
const MAX_STEPS = 20_000;

export class SiteModel {
  readonly key: number;
  readonly steering: SteeringStore;
  readonly history: History;
  /** Instant the state refers to, epoch ms. */
  t: number;
  storedWh: number;
  battInWh: number;
  battOutWh: number;
  pvOutWh: number;
  gridInWh: number;
  gridOutWh: number;
  private snapT = NaN;
  private snapVersion = -1;
  private snap = new Float64Array(N_FIELDS);
  private flows: Flows = { loadW: 0, pvW: 0, battW: 0, gridW: 0 };
  private lastLoadW = 0;
  private base?: Baseline;

  constructor(readonly def: SiteDefinition, readonly seed: number, startTime: number) {
    this.key = hashString(def.siteReference);
    this.steering = new SteeringStore(def.pv.peakW);
    this.t = startTime;
    this.storedWh = (def.battery.initialSoc / 100) * def.battery.capacityWh;
    this.battInWh = def.battery.initialConsumedWh;
    this.battOutWh = def.battery.initialProducedWh;
    this.pvOutWh = def.pv.initialProducedWh;
    this.gridInWh = def.meter.initialImportWh;
    this.gridOutWh = def.meter.initialExportWh;
    this.history = new History();
    this.history.record(startTime, this.snapshot());
  }

  /**
   * Power flows at instant t with the steering that applies at t. `dtH` is the length of the
   * step about to be integrated (hours), used to keep SOC within 0-100 %; 0 for an instant.
   */
  dispatch(t: number, dtH: number): Flows {
    const { def, seed, key } = this;
    return dispatch(
      {
        def,
        loadW: loadW(seed, key, def.load.profile, def.load.minW, def.load.maxW, t),
        pvPotentialW: pvPotentialW(seed, key, def.pv.peakW, t),
        storedWh: this.storedWh,
        steering: this.steering.activeAt(t),
        dtH,
      },
      this.flows,
    );
  }

  /** Integrates the state up to `target` (no-op if it is not after the current instant). */
  advanceTo(target: number): void {
    if (!(target > this.t)) return;
    const stepMax = Math.max(MINUTE_MS, Math.ceil((target - this.t) / MAX_STEPS));
    const cap = this.def.battery.capacityWh;
    while (this.t < target) {
      const t = this.t;
      const next = Math.min(target, t + stepMax, (Math.floor(t / QUARTER_HOUR_MS) + 1) * QUARTER_HOUR_MS, this.steering.nextChange(t));
      const dtH = (next - t) / HOUR_MS;
      const f = this.dispatch(t, dtH);
      this.storedWh = Math.min(cap, Math.max(0, this.storedWh - f.battW * dtH));
      if (f.battW > 0) this.battOutWh += f.battW * dtH;
      else this.battInWh -= f.battW * dtH;
      this.pvOutWh += f.pvW * dtH;
      if (f.gridW > 0) this.gridInWh += f.gridW * dtH;
      else this.gridOutWh -= f.gridW * dtH;
      this.t = next;
      if (next % QUARTER_HOUR_MS === 0) this.history.record(next, this.snapshot());
    }
  }

  /** All fields at the model's current instant (cached until time or steering changes). */
  snapshot(): Float64Array {
    if (this.snapT === this.t && this.snapVersion === this.steering.version) return this.snap;
    const f = this.dispatch(this.t, 0);
    const v = this.snap;
    v[F_SOC] = Math.min(100, Math.max(0, (this.storedWh / this.def.battery.capacityWh) * 100));
    v[F_BATT_P] = f.battW;
    v[F_BATT_IN] = this.battInWh;
    v[F_BATT_OUT] = this.battOutWh;
    v[F_PV_P] = f.pvW;
    v[F_PV_OUT] = this.pvOutWh;
    v[F_GRID_P] = f.gridW;
    v[F_GRID_IN] = this.gridInWh;
    v[F_GRID_OUT] = this.gridOutWh;
    this.snapT = this.t;
    this.snapVersion = this.steering.version;
    this.lastLoadW = f.loadW;
    return v;
  }

  /** The baseline of the past, anchored at the oldest retained sample. */
  baseline(): Baseline {
    const t0 = this.history.firstTime;
    if (!this.base || this.base.t0 !== t0) this.base = new Baseline(this.def, this.seed, this.key, t0, this.history.anchor());
    return this.base;
  }

  /** Live flows at the model's current instant (GET /sites/{ref}/state). */
  siteState(): SiteState {
    const v = this.snapshot();
    const r = (x: number) => Math.round(x) || 0;
    return {
      siteReference: this.def.siteReference,
      timestamp: this.t,
      pvW: r(v[F_PV_P]),
      loadW: r(this.lastLoadW),
      batteryW: r(v[F_BATT_P]),
      gridW: r(v[F_GRID_P]),
      soc: Math.round(v[F_SOC] * 100) / 100,
    };
  }
}
