/**
 * Price → battery plan: the battery schedule that maximises arbitrage value (buy low, sell
 * high) over a list of price slots, within the battery's SOC window, power limits and
 * round-trip efficiency. Pure: no I/O, no clock, no Node-RED.
 * The model and the method: above planFromPrices.
 */
import { ValidationError, HOUR_MS, MINUTE_MS } from '../protocol';
import type { EpochMs } from '../protocol';
import { parsePlanInput, type Battery, type PlanInput, type PricePlanInput, type PriceSlot } from './price-input';

/** Most grid states one plan may use (moves are kept in an Int16Array: below 32768). */
const MAX_STATES = 10_001;
/** Relative slack for "a whole number of steps" and "at a limit". */
const EPS = 1e-9;
/** Relative difference of two values within which they count as equal (float rounding), so the smaller move wins. */
const TIE = 1e-13;

/** One slot of the plan; `start`, `end` and `energyStorage` are a slot of the `ems-schedule` node. */
export interface PlanSlot {
  start: EpochMs;
  end: EpochMs;
  /** Average power over the slot, grid side: positive = discharge, negative = charge, 0 = idle. */
  energyStorage: { value: number; unit: 'kW' };
  /** The slot's price, as given (per `priceUnit`). */
  price: number;
  /** Energy to the grid over the slot, kWh (positive = discharged, negative = charged). */
  energyKWh: number;
  /** SOC (%) at the slot's start and end. */
  socStart: number;
  socEnd: number;
}

export interface PricePlan {
  slots: PlanSlot[];
  /** The planned SOC curve: the first slot's start, every slot's end, and the start of a slot after a gap. */
  soc: { time: EpochMs; soc: number }[];
  /** Expected arbitrage value: Σ price × energyKWh (energy in `priceUnit`), in the prices' currency. */
  value: number;
  priceUnit: 'kWh' | 'MWh';
  /** Grid-side energy charged and discharged over the plan, kWh (both ≥ 0). */
  chargedKWh: number;
  dischargedKWh: number;
  /** The SOC grid step, kWh of stored energy (the plan's resolution). */
  stepKWh: number;
}

/** The discretisation of one plan (exported for the exhaustive-search tests). */
export interface PlanGrid {
  /** Step of stored energy, kWh; state i holds (soc/100)·capacity + i·step. */
  step: number;
  /** The SOC window in steps from the current SOC: [iMin, iMax]. */
  iMin: number;
  iMax: number;
  /** States the plan may use: [lo, hi] (wider than the window when the current SOC is outside it). */
  lo: number;
  hi: number;
  /** Per slot: the largest charge and discharge move, in steps. */
  up: Int32Array;
  down: Int32Array;
  /** The least end state (socEnd), or lo. */
  iEnd: number;
}

const hoursOf = (s: PriceSlot) => (s.end - s.start) / HOUR_MS;

const gcd = (a: number, b: number): number => (b ? gcd(b, a % b) : a);

/**
 * The slot length the grid is made for, ms: the greatest common divisor of the slot lengths
 * in whole minutes (15 for 15-minute and hourly slots), leaving out the first slot (`now` may
 * have cut it) unless it is the only one; when that is under 5 minutes or the lengths are
 * not whole minutes, the most common length.
 */
function baseLength(slots: PriceSlot[]): number {
  const lengths = (slots.length > 1 ? slots.slice(1) : slots).map((s) => s.end - s.start);
  if (lengths.every((d) => d % MINUTE_MS === 0)) {
    const minutes = lengths.reduce((a, d) => gcd(a, d / MINUTE_MS), 0);
    if (minutes >= 5) return minutes * MINUTE_MS;
  }
  const count = new Map<number, number>();
  let best = lengths[0];
  for (const d of lengths) {
    const seen = (count.get(d) ?? 0) + 1;
    count.set(d, seen);
    if (seen > (count.get(best) ?? 0)) best = d;
  }
  return best;
}

/**
 * The grid step: at most window/steps and at most either full move (a full charge `c` and a
 * full discharge `d` over the common slot length, kWh of stored energy). Among steps down to
 * half of that, the largest that makes both c and d whole numbers of steps (with equal limits
 * and 90 % round trip d/c = 10/9, so every ninth step count does); without one, the step that
 * leaves the least of the other move over.
 */
function chooseStep(window: number, c: number, d: number, steps: number): number {
  const base = Math.min(window / steps, c, d);
  let best = base;
  let bestLoss = Infinity;
  for (const [a, b] of [
    [c, d],
    [d, c],
  ]) {
    const fewestSteps = Math.max(1, Math.ceil(a / base - EPS));
    for (let m = fewestSteps; m <= 2 * fewestSteps; m++) {
      const step = a / m; // a is exactly m steps
      const loss = (b - Math.floor(b / step + EPS) * step) / b; // the part of b lost to the floor
      if (loss <= EPS) {
        if (bestLoss > EPS || step > best) {
          best = step;
          bestLoss = 0;
        }
        break;
      }
      if (loss < bestLoss - EPS) {
        best = step;
        bestLoss = loss;
      }
    }
  }
  return best;
}

/** The grid of a checked input (throws a ValidationError when the limits need too many states). */
export function planGrid(input: PlanInput): PlanGrid {
  const { slots, battery: b, steps } = input;
  const root = Math.sqrt(b.efficiency);
  const cap = b.capacityKWh;
  const e0 = (b.soc / 100) * cap;
  const eMin = (b.socMin / 100) * cap;
  const eMax = (b.socMax / 100) * cap;
  const dt = baseLength(slots) / HOUR_MS;
  const chargeKWhPerSlot = b.maxChargeKW * root * dt;
  const dischargeKWhPerSlot = (b.maxDischargeKW / root) * dt;
  const step = chooseStep(eMax - eMin, chargeKWhPerSlot, dischargeKWhPerSlot, steps);
  const iMin = Math.ceil((eMin - e0) / step - EPS);
  const iMax = Math.floor((eMax - e0) / step + EPS);
  const lo = Math.min(0, iMin);
  const hi = Math.max(0, iMax);
  if (hi - lo + 1 > MAX_STATES) {
    if ((eMax - eMin) / steps <= Math.min(chargeKWhPerSlot, dischargeKWhPerSlot)) {
      throw new ValidationError(
        'steps',
        `needs ${hi - lo + 1} SOC grid states from battery.soc ${b.soc} %, more than ${MAX_STATES}: give fewer (a whole number within [2, 2000]); got ${steps}`,
        'unprocessable',
      );
    }
    const field = chargeKWhPerSlot <= dischargeKWhPerSlot ? 'battery.maxChargeKW' : 'battery.maxDischargeKW';
    throw new ValidationError(
      field,
      `is too small for the SOC window to plan: a slot of ${Math.round(dt * 60)} min moves less than 1/${MAX_STATES - 1} of capacityKWh × (socMax − socMin) %; got ${chargeKWhPerSlot <= dischargeKWhPerSlot ? b.maxChargeKW : b.maxDischargeKW}`,
      'unprocessable',
    );
  }
  const up = new Int32Array(slots.length);
  const down = new Int32Array(slots.length);
  slots.forEach((s, k) => {
    const hours = hoursOf(s);
    up[k] = Math.floor((b.maxChargeKW * root * hours) / step + EPS);
    down[k] = Math.floor(((b.maxDischargeKW / root) * hours) / step + EPS);
  });
  const iEnd =
    input.socEnd === undefined
      ? lo
      : Math.min(Math.ceil(((input.socEnd / 100) * cap - e0) / step - EPS), Math.max(0, iMax));
  return { step, iMin, iMax, lo, hi, up, down, iEnd };
}

/** The moves (in steps) state i may make in slot k: [from, to], within power, and towards or within the window. */
function moveRange(g: PlanGrid, k: number, i: number): [number, number] {
  const jLo = i < g.iMin ? i : Math.max(g.iMin, i - g.down[k]);
  const jHi = i > g.iMax ? i : Math.min(g.iMax, i + g.up[k]);
  return [jLo - i, jHi - i];
}

/** Grid-side energy (kWh, positive = to the grid) of a move of m steps (positive = charge). */
function moveEnergy(m: number, step: number, efficiency: number): number {
  const root = Math.sqrt(efficiency);
  return m > 0 ? -(m * step) / root : m < 0 ? -m * step * root : 0;
}

/** The highest SOC (%) reachable by the end, charging at full power from the start. */
function reachableSoc(g: PlanGrid, b: Battery, n: number): number {
  let state = 0;
  for (let k = 0; k < n; k++) state += moveRange(g, k, state)[1];
  return Math.round((b.soc + (state * g.step * 100) / b.capacityKWh) * 100) / 100;
}

/**
 * For every state s, the j within [s + a, s + b] and [min, max] with the largest key[j], or -1
 * when there is none above -Infinity: a sliding-window maximum over a monotone deque, so
 * O(states) per slot whatever the power. On equal keys the j nearest to s wins (the smaller
 * move): the lowest j for a window above s (`nearLow`), the highest for one below.
 */
function windowArgMax(
  key: Float64Array,
  a: number,
  b: number,
  min: number,
  max: number,
  nearLow: boolean,
  out: Int32Array,
  dq: Int32Array,
): void {
  let head = 0;
  let tail = 0;
  let next = min;
  for (let s = 0; s < key.length; s++) {
    const from = Math.max(min, s + a);
    const to = Math.min(max, s + b);
    for (; next <= to; next++) {
      const value = key[next];
      if (value === -Infinity) continue;
      while (tail > head && (nearLow ? key[dq[tail - 1]] < value : key[dq[tail - 1]] <= value)) tail--;
      dq[tail++] = next;
    }
    while (tail > head && dq[head] < from) head++;
    out[s] = tail > head && from <= to ? dq[head] : -1;
  }
}

/**
 * Dynamic programming, backwards: the best value from each state at each slot, and the move
 * that reaches it (on values equal within rounding the smaller move, idle first). A move of
 * m steps is worth m × (value of a step), so the best charge from state s is the maximum of
 * V(j) + j·c over the states s can charge to, less s·c (and so for discharge): two
 * sliding-window maxima per slot, O(slots × states). Returns the moves of the plan from the
 * current SOC (state 0).
 */
function solve(input: PlanInput, g: PlanGrid): Int32Array {
  const { slots, battery: b } = input;
  const slotCount = slots.length;
  const size = g.hi - g.lo + 1;
  const perKWh = input.priceUnit === 'MWh' ? 1 / 1000 : 1;
  const policy = new Int16Array(slotCount * size); // moves, |m| < MAX_STATES
  let next = new Float64Array(size);
  let cur = new Float64Array(size);
  const key = new Float64Array(size);
  const toCharge = new Int32Array(size);
  const toDischarge = new Int32Array(size);
  const dq = new Int32Array(size);
  for (let s = 0; s < size; s++) next[s] = s + g.lo >= g.iEnd ? 0 : -Infinity;
  for (let k = slotCount - 1; k >= 0; k--) {
    const price = slots[k].price * perKWh;
    const charge = moveEnergy(1, g.step, b.efficiency) * price; // value of one step charged (m = +1)
    const discharge = -moveEnergy(-1, g.step, b.efficiency) * price; // value of a move m < 0 is m × this
    // within power, and towards or within the window: up to iMax charging, down to iMin discharging
    for (let s = 0; s < size; s++) key[s] = next[s] + s * charge;
    windowArgMax(key, 1, g.up[k], 0, g.iMax - g.lo, true, toCharge, dq);
    for (let s = 0; s < size; s++) key[s] = next[s] + s * discharge;
    windowArgMax(key, -g.down[k], -1, g.iMin - g.lo, size - 1, false, toDischarge, dq);
    const row = k * size;
    for (let s = 0; s < size; s++) {
      let best = next[s];
      let bestMove = 0;
      for (const j of [toCharge[s], toDischarge[s]]) {
        if (j < 0) continue;
        const move = j - s;
        const value = move * (move > 0 ? charge : discharge) + next[j];
        // better by more than rounding, or as good (within rounding) with a smaller move
        const tol = best === -Infinity ? 0 : TIE * (Math.abs(best) + Math.abs(value));
        if (value > best + tol || (value >= best - tol && Math.abs(move) < Math.abs(bestMove))) {
          best = value;
          bestMove = move;
        }
      }
      cur[s] = best;
      policy[row + s] = bestMove;
    }
    [cur, next] = [next, cur];
  }
  if (next[-g.lo] === -Infinity) {
    throw new ValidationError(
      'socEnd',
      `cannot be reached by the end of the last slot: at most ${reachableSoc(g, b, slotCount)} % from battery.soc ${b.soc} % at battery.maxChargeKW; got ${input.socEnd}`,
      'unprocessable',
    );
  }
  const moves = new Int32Array(slotCount);
  let state = 0;
  for (let k = 0; k < slotCount; k++) {
    moves[k] = policy[k * size + state - g.lo];
    state += moves[k];
  }
  return moves;
}

/** Snaps an energy within EPS of a slot's full-power energy onto it (so full power reads 50, not 49.999…). */
function snap(e: number, b: Battery, h: number): number {
  const fullPower = e > 0 ? b.maxDischargeKW * h : -b.maxChargeKW * h;
  return Math.abs(e - fullPower) <= EPS * Math.abs(fullPower) ? fullPower : e;
}

/**
 * The plan that maximises Σ price × (discharged − charged energy) over the price slots, within the
 * battery's limits; P is grid side, positive = discharge. Dynamic programming over a grid of stored energy
 * whose origin is the current SOC, exact on that grid (model and method: docs/planner.md, "Prices alone").
 * Throws a ValidationError naming the field for any bad input.
 */
export function planFromPrices(input: PricePlanInput): PricePlan {
  const checked = parsePlanInput(input);
  const { slots, battery: b } = checked;
  const grid = planGrid(checked);
  const moves = solve(checked, grid);
  const perKWh = checked.priceUnit === 'MWh' ? 1 / 1000 : 1;
  const socOf = (i: number) => b.soc + (i * grid.step * 100) / b.capacityKWh;
  const out: PlanSlot[] = [];
  const curve: { time: EpochMs; soc: number }[] = [];
  let value = 0;
  let chargedKWh = 0;
  let dischargedKWh = 0;
  let state = 0;
  slots.forEach((s, k) => {
    const hours = hoursOf(s);
    const energyKWh = snap(moveEnergy(moves[k], grid.step, b.efficiency), b, hours);
    const socStart = socOf(state);
    if (k === 0 || slots[k - 1].end !== s.start) curve.push({ time: s.start, soc: socStart });
    state += moves[k];
    const socEnd = socOf(state);
    curve.push({ time: s.end, soc: socEnd });
    value += s.price * perKWh * energyKWh;
    if (energyKWh > 0) dischargedKWh += energyKWh;
    else chargedKWh -= energyKWh;
    out.push({
      start: s.start,
      end: s.end,
      energyStorage: { value: energyKWh / hours || 0, unit: 'kW' },
      price: s.price,
      energyKWh: energyKWh || 0,
      socStart,
      socEnd,
    });
  });
  return { slots: out, soc: curve, value, priceUnit: checked.priceUnit, chargedKWh, dischargedKWh, stepKWh: grid.step };
}
