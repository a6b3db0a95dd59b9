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
    const battery = def.battery;
    this.key = hashString(def.siteReference);
    this.steering = new SteeringStore(def.pv.peakW);
    this.startTime = startTime;
    this.t = startTime;
    ({ minWh: this.minWh, maxWh: this.maxWh, sqrtEff: this.sqrtEff } = batteryWindow(def));
    const warmUp = opts.warmUp;
    this.target = warmUp?.target;
    this.historyDays = warmUp ? 0 : (opts.historyDays ?? HISTORY_DAYS);
    this.storedWh = ((warmUp ? warmUp.startSoc : battery.initialSoc) / 100) * battery.capacityWh;
    this.battInWh = warmUp ? 0 : battery.initialConsumedWh;
    this.battOutWh = warmUp ? 0 : battery.initialProducedWh;
    this.pvOutWh = warmUp ? 0 : def.pv.initialProducedWh;
    this.gridInWh = warmUp ? 0 : def.meter.initialImportWh;
    this.gridOutWh = warmUp ? 0 : def.meter.initialExportWh;
    this.history = new History(warmUp ? Math.ceil((warmUp.target.at - startTime) / QUARTER_HOUR_MS) + 2 : 96);
    if (warmUp || this.historyDays <= 0) this.history.pastLoaded = true;
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
    const flows = this.dispatch(t, dtH);
    let battW = flows.battW;
    const stored = this.storedWh;
    if (dtH > 0) {
      if (battW > 0) battW = Math.min(battW, Math.max(0, ((stored - this.minWh) * this.sqrtEff) / dtH));
      else if (battW < 0) battW = Math.max(battW, -Math.max(0, (this.maxWh - stored) / (this.sqrtEff * dtH)));
      if (this.target) battW = this.towardsTarget(t, dtH, battW);
    } else if ((battW > 0 && stored <= this.minWh + EPS_WH) || (battW < 0 && stored >= this.maxWh - EPS_WH)) {
      battW = 0;
    }
    if (battW !== flows.battW) {
      flows.battW = battW;
      flows.gridW = flows.loadW - flows.pvW - battW;
    }
    return flows;
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
    const target = this.target!;
    const leftH = Math.max(0, (target.at - t) / HOUR_MS - dtH);
    const next = this.storedWh - this.drawWh(b, dtH);
    const lo = target.storedWh - target.rateWhPerH * leftH;
    const hi = target.storedWh + target.rateWhPerH * leftH;
    const want = next < lo ? lo : next > hi ? hi : next;
    if (want === next) return b;
    const draw = this.storedWh - want;
    const maxP = this.def.battery.maxPowerW;
    const powerW = draw > 0 ? (draw * this.sqrtEff) / dtH : draw / (this.sqrtEff * dtH);
    return Math.min(maxP, Math.max(-maxP, powerW));
  }

  /** Integrates the state up to `target` (no-op if it is not after the current instant). */
  advanceTo(target: number, minStepMs = MINUTE_MS): void {
    if (!(target > this.t)) return;
    const stepMax = Math.max(minStepMs, Math.ceil((target - this.t) / MAX_STEPS));
    while (this.t < target) {
      const stepStart = this.t;
      const next = Math.min(
        target,
        stepStart + stepMax,
        (Math.floor(stepStart / QUARTER_HOUR_MS) + 1) * QUARTER_HOUR_MS,
        this.steering.nextChange(stepStart),
      );
      const dtH = (next - stepStart) / HOUR_MS;
      const flows = this.flowsAt(stepStart, dtH);
      this.storedWh -= this.drawWh(flows.battW, dtH);
      if (flows.battW > 0) this.battOutWh += flows.battW * dtH;
      else this.battInWh -= flows.battW * dtH;
      this.pvOutWh += flows.pvW * dtH;
      if (flows.gridW > 0) this.gridInWh += flows.gridW * dtH;
      else this.gridOutWh -= flows.gridW * dtH;
      this.loadWh += flows.loadW * dtH;
      this.t = next;
      if (next % QUARTER_HOUR_MS === 0) this.history.record(next, this.snapshot(), this.loadWh);
    }
  }

  /** All fields at the model's current instant (cached until time or steering changes). */
  snapshot(): Float64Array {
    if (this.snapT === this.t && this.snapVersion === this.steering.version) return this.snap;
    const flows = this.flowsAt(this.t, 0);
    const snap = this.snap;
    snap[F_SOC] = Math.min(100, Math.max(0, (this.storedWh / this.def.battery.capacityWh) * 100));
    snap[F_BATT_P] = flows.battW;
    snap[F_BATT_IN] = this.battInWh;
    snap[F_BATT_OUT] = this.battOutWh;
    snap[F_PV_P] = flows.pvW;
    snap[F_PV_OUT] = this.pvOutWh;
    snap[F_GRID_P] = flows.gridW;
    snap[F_GRID_IN] = this.gridInWh;
    snap[F_GRID_OUT] = this.gridOutWh;
    this.snapT = this.t;
    this.snapVersion = this.steering.version;
    this.snapshotCount++;
    this.lastLoadW = flows.loadW;
    return snap;
  }

  /**
   * Makes the history reach before the start: the warm-up (history-warmup.ts) is computed
   * once, on the first call, and put in front of the recorded samples. Returns the history.
   */
  past(): History {
    const recorded = this.history;
    if (recorded.pastLoaded) return recorded;
    recorded.pastLoaded = true;
    if (recorded.firstTime !== this.startTime) return recorded; // the oldest samples were dropped: the past is gone
    const make = (def: SiteDefinition, seed: number, t0: number, startSoc: number, target: SocTarget) =>
      new SiteModel(def, seed, t0, { warmUp: { startSoc, target } });
    const computed = computePast(this.def, this.seed, this.key, this.startTime, this.historyDays, make);
    recorded.prepend(computed.history, computed.from, computed.to, computed.offsets);
    return recorded;
  }

  /** Live flows at the model's current instant (GET /sites/{ref}/state). */
  siteState(): SiteState {
    const snap = this.snapshot();
    const whole = (x: number) => Math.round(x) || 0;
    return {
      siteReference: this.def.siteReference,
      timestamp: this.t,
      pvW: whole(snap[F_PV_P]),
      loadW: whole(this.lastLoadW),
      batteryW: whole(snap[F_BATT_P]),
      gridW: whole(snap[F_GRID_P]),
      soc: Math.round(snap[F_SOC] * 100) / 100,
    };
  }
}
