/**
 * The steering components of one site, stored separately (spec section 3): energy storage
 * setting, production curtailment, maximize grid import, the grid target and the grid limits
 * (vendor notes). Each component has its own slot and validity; a new request for a component
 * replaces that slot only, and components it does not carry keep their values. A component
 * applies while validFrom <= t < validUntil; one with a future validFrom is kept and applies
 * from then (A18). How steering types displace each other: above SteeringStore.
 */
import { curtailmentToWatts, toWatts, DISPLACES, STEERING_ENDPOINTS, STEERING_ENDPOINT_NAMES } from '../protocol';
import type {
  SteeringBodies,
  SteeringComponent,
  SteeringEndpoint,
  SteeringType,
  ActiveSteeringRequest,
  ComponentState,
  CurtailmentSteeringRequest,
  EssSteeringRequest,
  GridLimitsRequest,
  GridTargetRequest,
  PowerValue,
  SteeringState,
} from '../protocol';
import { contractOf, type SiteDefinition } from './sites';

const COMPONENTS = ['energyStorageSetting', 'productionCurtailment', 'maximizeGridImport', 'gridTarget'] as const;
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

/** Grid limits as stored: what was requested and, W, what is in force (within the contractual limits). */
export interface StoredGridLimits {
  requested: Pick<GridLimitsRequest, 'upperLimit' | 'lowerLimit'>;
  /** The requested limits in W (absent where not requested). */
  upperW?: number;
  lowerW?: number;
  /** In force, W: the requested ones clamped to the contractual limits, the contractual ones where not requested. */
  inForce: { upperW: number; lowerW: number };
  validFrom: number;
  validUntil: number;
}

/** Components that apply at one instant, in W, for the physics. */
export interface ActiveSteering {
  essW?: number;
  curtailW?: number;
  maximizeGridImport: boolean;
  gridTarget?: { setpointW: number; deadbandW: number };
  /** Requested grid limits, W (dispatch clamps them to the contractual limits). */
  gridLimits?: { upperW?: number; lowerW?: number };
}

/**
 * The simulator's handler of each steering endpoint of the protocol's table: applies the
 * accepted (validated) body to a site's store at `now` and returns the answer's fields
 * (the route adds the requestId). `site` is the site's definition (its contractual limits).
 * A new endpoint needs its handler here. Displacing the other steering type is done before,
 * by SteeringStore.displace (Simulator.steer).
 */
export const STEERING_HANDLERS: {
  readonly [E in SteeringEndpoint]: (
    store: SteeringStore,
    body: SteeringBodies[E],
    now: number,
    site: SiteDefinition,
  ) => object;
} = {
  combined: (store, body, now) => (store.applyCombined(body, now), body),
  ess: (store, body, now) => (store.applyEss(body, now), body),
  curtailment: (store, body, now) => (store.applyCurtailment(body, now), body),
  'grid-target': (store, body, now) => (store.applyGridTarget(body, now), body),
  'cancel-grid-target': (store, _body, now) => ({ cancelled: store.cancelGridTarget(now) }),
  'grid-limits': (store, body, now, site) => (store.applyGridLimits(body, now, site), body),
};

/** The components each steering type consists of, from the protocol's endpoint table. */
const TYPE_COMPONENTS: Readonly<Record<SteeringType, readonly SteeringComponent[]>> = (() => {
  const out: Record<string, Set<SteeringComponent>> = {};
  for (const e of STEERING_ENDPOINT_NAMES) {
    const spec = STEERING_ENDPOINTS[e];
    for (const c of spec.components) (out[spec.type] ??= new Set()).add(c);
  }
  return Object.fromEntries(Object.entries(out).map(([t, set]) => [t, [...set]])) as Record<
    SteeringType,
    SteeringComponent[]
  >;
})();

/** The earlier of `next` and the first bound of `c` (validFrom, validUntil) after t. */
function changeAfter(c: { validFrom: number; validUntil: number } | null, t: number, next: number): number {
  if (c === null) return next;
  if (c.validFrom > t && c.validFrom < next) next = c.validFrom;
  if (c.validUntil > t && c.validUntil < next) next = c.validUntil;
  return next;
}

/**
 * Steering types (vendor notes, protocol DISPLACES): a request of one type ends the stored
 * components of the types it displaces at once, like a replaced slot (A18): asset steering
 * and the grid target end each other; grid limits coexist with both. A cancel sets nothing
 * and ends nothing else.
 */
export class SteeringStore {
  private slots: Record<ComponentName, StoredComponent | null> = {
    energyStorageSetting: null,
    productionCurtailment: null,
    maximizeGridImport: null,
    gridTarget: null,
  };
  private limits: StoredGridLimits | null = null;
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
    const component: StoredComponent = {
      value: req.setpoint.value,
      unit: req.setpoint.unit,
      validFrom: req.validFrom ?? now,
      validUntil: req.validUntil,
      watts: toWatts(req.setpoint),
      deadbandW: req.deadband ? toWatts(req.deadband) : 0,
    };
    if (req.deadband) component.deadband = { ...req.deadband };
    this.put('gridTarget', component);
  }

  /** Cancels the grid target. True when one was stored and had not expired yet. */
  cancelGridTarget(now: number): boolean {
    const stored = this.slots.gridTarget;
    const cancelled = stored !== null && stored.validUntil > now;
    if (stored !== null) this.put('gridTarget', null);
    return cancelled;
  }

  /**
   * Grid limits (vendor notes): replace the stored limits (one slot, both limits; a limit the
   * request leaves out is the contractual one). What is in force is clamped to the site's
   * contractual limits: a limit outside them is not followed beyond them.
   */
  applyGridLimits(req: GridLimitsRequest, now: number, site: SiteDefinition): void {
    const contract = contractOf(site);
    const clamp = (w: number) => Math.min(contract.maxImportW, Math.max(-contract.maxExportW, w));
    const requested: StoredGridLimits['requested'] = {};
    const stored: StoredGridLimits = {
      requested,
      inForce: { upperW: contract.maxImportW, lowerW: -contract.maxExportW },
      validFrom: req.validFrom ?? now,
      validUntil: req.validUntil,
    };
    if (req.upperLimit) {
      requested.upperLimit = { ...req.upperLimit };
      stored.upperW = toWatts(req.upperLimit);
      stored.inForce.upperW = clamp(stored.upperW);
    }
    if (req.lowerLimit) {
      requested.lowerLimit = { ...req.lowerLimit };
      stored.lowerW = toWatts(req.lowerLimit);
      stored.inForce.lowerW = clamp(stored.lowerW);
    }
    this.limits = stored;
    this.version++;
  }

  /**
   * Ends the stored components of the types a request of `type` displaces (DISPLACES): at
   * once, whether they apply now or only from a future validFrom (A18). Returns the ended
   * components' names.
   */
  displace(type: SteeringType): SteeringComponent[] {
    const ended: SteeringComponent[] = [];
    for (const other of DISPLACES[type]) {
      for (const name of TYPE_COMPONENTS[other]) {
        if (name === 'gridLimits') {
          if (this.limits !== null) ended.push(name);
          this.limits = null;
        } else {
          if (this.slots[name] !== null) ended.push(name);
          this.slots[name] = null;
        }
      }
    }
    if (ended.length > 0) this.version++;
    return ended;
  }

  private setEss(v: PowerValue, validFrom: number, validUntil: number): void {
    this.put('energyStorageSetting', {
      value: v.value,
      unit: v.unit,
      validFrom,
      validUntil,
      watts: toWatts(v),
      deadbandW: 0,
    });
  }

  private setCurtailment(v: { value: number; unit: string }, validFrom: number, validUntil: number): void {
    const watts = curtailmentToWatts(v as Parameters<typeof curtailmentToWatts>[0], this.installedPvW);
    this.put('productionCurtailment', { value: v.value, unit: v.unit, validFrom, validUntil, watts, deadbandW: 0 });
  }

  /** The component if it applies at t. */
  active(name: ComponentName, t: number): StoredComponent | null {
    const stored = this.slots[name];
    return stored !== null && stored.validFrom <= t && t < stored.validUntil ? stored : null;
  }

  /** What applies at t, in W. */
  activeAt(t: number): ActiveSteering {
    const out: ActiveSteering = { maximizeGridImport: false };
    const ess = this.active('energyStorageSetting', t);
    if (ess) out.essW = ess.watts;
    const curtailment = this.active('productionCurtailment', t);
    if (curtailment) out.curtailW = curtailment.watts;
    const maximizeImport = this.active('maximizeGridImport', t);
    if (maximizeImport) out.maximizeGridImport = maximizeImport.value === true;
    const gridTarget = this.active('gridTarget', t);
    if (gridTarget) out.gridTarget = { setpointW: gridTarget.watts, deadbandW: gridTarget.deadbandW };
    const gridLimits = this.activeLimits(t);
    if (gridLimits) out.gridLimits = { upperW: gridLimits.upperW, lowerW: gridLimits.lowerW };
    return out;
  }

  /** The grid limits if they apply at t. */
  activeLimits(t: number): StoredGridLimits | null {
    const limits = this.limits;
    return limits !== null && limits.validFrom <= t && t < limits.validUntil ? limits : null;
  }

  /** The first instant after t at which the set of applying components changes (Infinity if none). */
  nextChange(t: number): number {
    let next = changeAfter(this.limits, t, Infinity);
    for (const n of COMPONENTS) next = changeAfter(this.slots[n], t, next);
    return next;
  }

  /** GET /sites/{ref}/steering: only the components that apply now. */
  state(siteReference: string, now: number): SteeringState {
    const view = (name: ComponentName): ComponentState<never> | null => {
      const component = this.active(name, now);
      if (!component) return null;
      const out: Record<string, unknown> = { value: component.value };
      if (component.unit !== undefined) out.unit = component.unit;
      out.validFrom = component.validFrom;
      out.validUntil = component.validUntil;
      if (component.deadband) out.deadband = { ...component.deadband };
      return out as unknown as ComponentState<never>;
    };
    return {
      siteReference,
      components: {
        energyStorageSetting: view('energyStorageSetting'),
        productionCurtailment: view('productionCurtailment'),
        maximizeGridImport: view('maximizeGridImport'),
        gridTarget: view('gridTarget'),
        gridLimits: this.limitsView(now),
      },
    };
  }

  /** The grid limits that apply now: in force (W) and as requested. */
  private limitsView(now: number): SteeringState['components']['gridLimits'] {
    const limits = this.activeLimits(now);
    if (!limits) return null;
    const requested: StoredGridLimits['requested'] = {};
    if (limits.requested.upperLimit) requested.upperLimit = { ...limits.requested.upperLimit };
    if (limits.requested.lowerLimit) requested.lowerLimit = { ...limits.requested.lowerLimit };
    return {
      upperW: limits.inForce.upperW,
      lowerW: limits.inForce.lowerW,
      validFrom: limits.validFrom,
      validUntil: limits.validUntil,
      requested,
    } as NonNullable<SteeringState['components']['gridLimits']>;
  }

  /** Drops every stored component. */
  reset(): void {
    for (const name of COMPONENTS) this.slots[name] = null;
    this.limits = null;
    this.version++;
  }
}
