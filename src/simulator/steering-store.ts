/**
 * The steering components of one site, stored separately (spec section 3): energy storage
 * setting, production curtailment, maximize grid import and the grid target (vendor notes).
 * Each component has its own slot and validity; a new request for a component replaces that
 * slot only, and components it does not carry keep their values. A component applies while
 * validFrom <= t < validUntil; one with a future validFrom is kept and applies from then.
 */
import { curtailmentToWatts, toWatts } from '../protocol/units';
import type { SteeringBodies, SteeringEndpoint } from '../protocol/endpoints';
import type {
  ActiveSteeringRequest,
  ComponentState,
  CurtailmentSteeringRequest,
  EssSteeringRequest,
  GridTargetRequest,
  PowerValue,
  SteeringState,
} from '../protocol/types';

export const COMPONENTS = ['energyStorageSetting', 'productionCurtailment', 'maximizeGridImport', 'gridTarget'] as const;
export type ComponentName = (typeof COMPONENTS)[number];

export interface StoredComponent {
  value: number | boolean;
  unit?: string;
  validFrom: number;
  validUntil: number;
  deadband?: PowerValue;
  /** The value in W, resolved when stored (% of installed PV for curtailment). */
  watts: number;
  /** Deadband in W (grid target only). */
  deadbandW: number;
}

/** Components that apply at one instant, in W, for the physics. */
export interface ActiveSteering {
  essW?: number;
  curtailW?: number;
  maximizeGridImport: boolean;
  gridTarget?: { setpointW: number; deadbandW: number };
}

/**
 * The simulator's handler of each steering endpoint of the protocol's table: applies the
 * accepted (validated) body to a site's store at `now` and returns the answer's fields
 * (the route adds the requestId). A new endpoint needs its handler here.
 */
export const STEERING_HANDLERS: { readonly [E in SteeringEndpoint]: (store: SteeringStore, body: SteeringBodies[E], now: number) => object } = {
  combined: (store, body, now) => (store.applyCombined(body, now), body),
  ess: (store, body, now) => (store.applyEss(body, now), body),
  curtailment: (store, body, now) => (store.applyCurtailment(body, now), body),
  'grid-target': (store, body, now) => (store.applyGridTarget(body, now), body),
  'cancel-grid-target': (store, _body, now) => ({ cancelled: store.cancelGridTarget(now) }),
  // Placeholder until grid limits are simulated: accepted and echoed.
  'grid-limits': (_store, body) => body,
};

export class SteeringStore {
  private slots: Record<ComponentName, StoredComponent | null> = {
    energyStorageSetting: null,
    productionCurtailment: null,
    maximizeGridImport: null,
    gridTarget: null,
  };
  /** Bumped on every change, so callers can cache per instant. */
  version = 0;

  constructor(private readonly installedPvW: number) {}

  private put(name: ComponentName, c: StoredComponent | null): void {
    this.slots[name] = c;
    this.version++;
  }

  /** Combined request (spec 4.6): each present component is set, absent ones stay. */
  applyCombined(req: ActiveSteeringRequest, now: number): void {
    const validFrom = req.validFrom ?? now;
    const { validUntil } = req;
    if (req.energyStorageSetting) this.setEss(req.energyStorageSetting, validFrom, validUntil);
    if (req.productionCurtailment) this.setCurtailment(req.productionCurtailment, validFrom, validUntil);
    if (req.maximizeGridImport !== undefined) {
      this.put('maximizeGridImport', { value: req.maximizeGridImport, validFrom, validUntil, watts: 0, deadbandW: 0 });
    }
  }

  /** ESS-only request (spec 4.7): replaces only the energy storage setting. */
  applyEss(req: EssSteeringRequest, now: number): void {
    this.setEss(req.setting, req.validFrom ?? now, req.validUntil);
  }

  /** Curtailment-only request (spec 4.8): replaces only the production curtailment. */
  applyCurtailment(req: CurtailmentSteeringRequest, now: number): void {
    this.setCurtailment(req.setting, req.validFrom ?? now, req.validUntil);
  }

  /** Grid target (vendor notes): replaces only the grid target. */
  applyGridTarget(req: GridTargetRequest, now: number): void {
    const c: StoredComponent = {
      value: req.setpoint.value,
      unit: req.setpoint.unit,
      validFrom: req.validFrom ?? now,
      validUntil: req.validUntil,
      watts: toWatts(req.setpoint),
      deadbandW: req.deadband ? toWatts(req.deadband) : 0,
    };
    if (req.deadband) c.deadband = { ...req.deadband };
    this.put('gridTarget', c);
  }

  /** Cancels the grid target. True when one was stored and had not expired yet. */
  cancelGridTarget(now: number): boolean {
    const c = this.slots.gridTarget;
    const cancelled = c !== null && c.validUntil > now;
    if (c !== null) this.put('gridTarget', null);
    return cancelled;
  }

  private setEss(v: PowerValue, validFrom: number, validUntil: number): void {
    this.put('energyStorageSetting', { value: v.value, unit: v.unit, validFrom, validUntil, watts: toWatts(v), deadbandW: 0 });
  }

  private setCurtailment(v: { value: number; unit: string }, validFrom: number, validUntil: number): void {
    const watts = curtailmentToWatts(v as Parameters<typeof curtailmentToWatts>[0], this.installedPvW);
    this.put('productionCurtailment', { value: v.value, unit: v.unit, validFrom, validUntil, watts, deadbandW: 0 });
  }

  /** The component if it applies at t. */
  active(name: ComponentName, t: number): StoredComponent | null {
    const c = this.slots[name];
    return c !== null && c.validFrom <= t && t < c.validUntil ? c : null;
  }

  /** What applies at t, in W. */
  activeAt(t: number): ActiveSteering {
    const out: ActiveSteering = { maximizeGridImport: false };
    const ess = this.active('energyStorageSetting', t);
    if (ess) out.essW = ess.watts;
    const cur = this.active('productionCurtailment', t);
    if (cur) out.curtailW = cur.watts;
    const mgi = this.active('maximizeGridImport', t);
    if (mgi) out.maximizeGridImport = mgi.value === true;
    const gt = this.active('gridTarget', t);
    if (gt) out.gridTarget = { setpointW: gt.watts, deadbandW: gt.deadbandW };
    return out;
  }

  /** The first instant after t at which the set of applying components changes (Infinity if none). */
  nextChange(t: number): number {
    let next = Infinity;
    for (const name of COMPONENTS) {
      const c = this.slots[name];
      if (c === null) continue;
      if (c.validFrom > t && c.validFrom < next) next = c.validFrom;
      if (c.validUntil > t && c.validUntil < next) next = c.validUntil;
    }
    return next;
  }

  /** GET /sites/{ref}/steering: only the components that apply now. */
  state(siteReference: string, now: number): SteeringState {
    const view = (name: ComponentName): ComponentState<never> | null => {
      const c = this.active(name, now);
      if (!c) return null;
      const out: Record<string, unknown> = { value: c.value };
      if (c.unit !== undefined) out.unit = c.unit;
      out.validFrom = c.validFrom;
      out.validUntil = c.validUntil;
      if (c.deadband) out.deadband = { ...c.deadband };
      return out as unknown as ComponentState<never>;
    };
    return {
      siteReference,
      components: {
        energyStorageSetting: view('energyStorageSetting'),
        productionCurtailment: view('productionCurtailment'),
        maximizeGridImport: view('maximizeGridImport'),
        gridTarget: view('gridTarget'),
      },
    };
  }

  /** Drops every stored component. */
  reset(): void {
    for (const name of COMPONENTS) this.slots[name] = null;
    this.version++;
  }
}
