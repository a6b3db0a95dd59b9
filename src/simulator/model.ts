/**
 * The physical model of one site: load, PV, battery and grid meter. State advances lazily
 * from its last update to the requested instant in steps of at most one minute (longer when
 * a huge jump would need too many steps), split exactly at quarter-hour sample boundaries
 * and at steering changes, so expiries apply at the right instant. At every quarter-hour
 * boundary the exact instantaneous state is recorded for the time series.
 * The battery and the history before the start: above SiteModel.
 */
import { HOUR_MS, MINUTE_MS, QUARTER_HOUR_MS } from './time-units';
import type { SiteState } from '../protocol';
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
} from './model-quantities';
import { batteryWindow, dispatch, type Flows } from './dispatch';
import { History } from './history';
import { HISTORY_DAYS, computePast } from './history-warmup';
import { hashString } from './prng';
import { loadW, pvPotentialW } from './profiles';
import type { SiteDefinition } from './sites';
import { SteeringStore } from './steering-store';
import type { SocTarget, WarmUpModel } from './warmup-model';

/** Upper bound of integration steps per advance (a year is then ~35k quarter-hour steps). */
const MAX_STEPS = 20_000;
/** Slack (Wh) within which the store counts as full or empty for an instantaneous reading. */
const EPS_WH = 1e-6;

/** How a model is run: the live model (default) or a warm-up of the past (history-warmup.ts). */
export interface SiteModelOptions {
  /** Days of history before the start (default HISTORY_DAYS); 0 for none. */
  historyDays?: number;
  /** A warm-up run: starts at `startSoc` (%) with counters at 0, and meets `target` at its end. */
  warmUp?: { startSoc: number; target: SocTarget };
}

/**
 * The battery stores energy with a round-trip efficiency (charging P stores P·√eff, a
 * discharge of P takes P/√eff from the store; its counters count the AC side) and is
 * operated within its SOC window. The history before the start is the same model run
 * forward over a warm-up (history-warmup.ts), computed on the first request that needs it.
 */
export class SiteModel implements WarmUpModel {
  readonly key: number;
  readonly steering: SteeringStore;
  readonly history: History;
  /** Simulated time at the model's creation (the simulator's start for the live model). */
  readonly startTime: number;
  /** Instant the state refers to, epoch ms. */
  t: number;
  storedWh: number;
  battInWh: number;
  battOutWh: number;
  pvOutWh: number;
  gridInWh: number;
  gridOutWh: number;
  /** Energy consumed by the site's load, Wh (internal counter, recorded for the balance). */
  loadWh = 0;
  /** The SOC window in Wh and the square root of the round-trip efficiency. */
  readonly minWh: number;
  readonly maxWh: number;
  readonly sqrtEff: number;
  private readonly historyDays: number;
  private readonly target?: SocTarget;
  private snapT = NaN;
  private snapVersion = -1;
  private snap = new Float64Array(N_FIELDS);
  /** Times snapshot() computed the fields anew: an answer made from a snapshot is valid while this stays. */
  snapshotCount = 0;
  private flows: Flows = { loadW: 0, pvW: 0, battW: 0, gridW: 0 };
  private lastLoadW = 0;

  constructor(
    readonly def: SiteDefinition,
    readonly seed: number,
    startTime: number,
    opts: SiteModelOptions = {},
  ) {
    const b = def.battery;
    this.key = hashString(def.siteReference);
    this.steering = new SteeringStore(def.pv.peakW);
    this.startTime = startTime;
    this.t = startTime;
    ({ minWh: this.minWh, maxWh: this.maxWh, sqrtEff: this.sqrtEff } = batteryWindow(def));
    const w = opts.warmUp;
    this.target = w?.target;
    this.historyDays = w ? 0 : (opts.historyDays ?? HISTORY_DAYS);
    this.storedWh = ((w ? w.startSoc : b.initialSoc) / 100) * b.capacityWh;
    this.battInWh = w ? 0 : b.initialConsumedWh;
    this.battOutWh = w ? 0 : b.initialProducedWh;
    this.pvOutWh = w ? 0 : def.pv.initialProducedWh;
    this.gridInWh = w ? 0 : def.meter.initialImportWh;
    this.gridOutWh = w ? 0 : def.meter.initialExportWh;
    this.history = new History(w ? Math.ceil((w.target.at - startTime) / QUARTER_HOUR_MS) + 2 : 96);
    if (w || this.historyDays <= 0) this.history.pastLoaded = true;
    this.history.record(startTime, this.snapshot(), this.loadWh);
  }

  /**
   * Power flows at instant t with the steering that applies at t. `dtH` is the length of the
   * step about to be integrated (hours), used to keep SOC within its window; 0 for an instant.
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

  /**
   * The flows the model integrates: dispatch's, kept within the SOC window (with the
   * efficiency: a step never takes the store past minWh or maxWh; at an instant, a full
   * store does not charge and an empty one does not discharge), and in a warm-up steered
   * onto its target in its last hours. The grid takes what the battery does not.
   */
  private flowsAt(t: number, dtH: number): Flows {
    const f = this.dispatch(t, dtH);
    let b = f.battW;
    const stored = this.storedWh;
    if (dtH > 0) {
      if (b > 0) b = Math.min(b, Math.max(0, ((stored - this.minWh) * this.sqrtEff) / dtH));
      else if (b < 0) b = Math.max(b, -Math.max(0, (this.maxWh - stored) / (this.sqrtEff * dtH)));
      if (this.target) b = this.towardsTarget(t, dtH, b);
    } else if ((b > 0 && stored <= this.minWh + EPS_WH) || (b < 0 && stored >= this.maxWh - EPS_WH)) {
      b = 0;
    }
    if (b !== f.battW) {
      f.battW = b;
      f.gridW = f.loadW - f.pvW - b;
    }
    return f;
  }

  /** Energy taken from the store (Wh, negative when stored) by battery power `b` over `dtH`. */
  private drawWh(b: number, dtH: number): number {
    return b > 0 ? (b / this.sqrtEff) * dtH : b * this.sqrtEff * dtH;
  }

  /**
   * Warm-up only: the store must stay within a cone that narrows to the target at its end
   * (target ± rate × time left), so the warm-up ends exactly at the live state's SOC. Inside
   * the cone the battery does what dispatch said; at its edge it is charged or discharged
   * just enough to stay in it.
   */
  private towardsTarget(t: number, dtH: number, b: number): number {
    const tg = this.target!;
    const leftH = Math.max(0, (tg.at - t) / HOUR_MS - dtH);
    const next = this.storedWh - this.drawWh(b, dtH);
    const lo = tg.storedWh - tg.rateWhPerH * leftH;
    const hi = tg.storedWh + tg.rateWhPerH * leftH;
    const want = next < lo ? lo : next > hi ? hi : next;
    if (want === next) return b;
    const draw = this.storedWh - want;
    const maxP = this.def.battery.maxPowerW;
    const p = draw > 0 ? (draw * this.sqrtEff) / dtH : draw / (this.sqrtEff * dtH);
    return Math.min(maxP, Math.max(-maxP, p));
  }

  /** Integrates the state up to `target` (no-op if it is not after the current instant). */
  advanceTo(target: number, minStepMs = MINUTE_MS): void {
    if (!(target > this.t)) return;
    const stepMax = Math.max(minStepMs, Math.ceil((target - this.t) / MAX_STEPS));
    while (this.t < target) {
      const t = this.t;
      const next = Math.min(
        target,
        t + stepMax,
        (Math.floor(t / QUARTER_HOUR_MS) + 1) * QUARTER_HOUR_MS,
        this.steering.nextChange(t),
      );
      const dtH = (next - t) / HOUR_MS;
      const f = this.flowsAt(t, dtH);
      this.storedWh -= this.drawWh(f.battW, dtH);
      if (f.battW > 0) this.battOutWh += f.battW * dtH;
      else this.battInWh -= f.battW * dtH;
      this.pvOutWh += f.pvW * dtH;
      if (f.gridW > 0) this.gridInWh += f.gridW * dtH;
      else this.gridOutWh -= f.gridW * dtH;
      this.loadWh += f.loadW * dtH;
      this.t = next;
      if (next % QUARTER_HOUR_MS === 0) this.history.record(next, this.snapshot(), this.loadWh);
    }
  }

  /** All fields at the model's current instant (cached until time or steering changes). */
  snapshot(): Float64Array {
    if (this.snapT === this.t && this.snapVersion === this.steering.version) return this.snap;
    const f = this.flowsAt(this.t, 0);
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
    this.snapshotCount++;
    this.lastLoadW = f.loadW;
    return v;
  }

  /**
   * Makes the history reach before the start: the warm-up (history-warmup.ts) is computed
   * once, on the first call, and put in front of the recorded samples. Returns the history.
   */
  past(): History {
    const h = this.history;
    if (h.pastLoaded) return h;
    h.pastLoaded = true;
    if (h.firstTime !== this.startTime) return h; // the oldest samples were dropped: the past is gone
    const make = (def: SiteDefinition, seed: number, t0: number, startSoc: number, target: SocTarget) =>
      new SiteModel(def, seed, t0, { warmUp: { startSoc, target } });
    const p = computePast(this.def, this.seed, this.key, this.startTime, this.historyDays, make);
    h.prepend(p.history, p.from, p.to, p.offsets);
    return h;
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
