/**
 * What the routes (routes.ts) need of the simulator (simulator.ts), which builds them: the
 * simulator implements RoutedSimulator, the routes take it in their RouteContext. Both import
 * it from here, so routes.ts does not import simulator.ts.
 */
import type {
  SteeringBodies,
  SteeringEndpoint,
  Measurement,
  MeasurementListItem,
  SiteState,
  SteeringState,
  TimeSeriesRequest,
  TimeSeriesResponse,
} from '../protocol';

/** The simulator as its routes call it. */
export interface RoutedSimulator {
  /** The list of devices, serialised once. */
  readonly devicesJson: string;
  /** The list of sites, serialised once. */
  readonly sitesJson: string;
  /** The site's model (404 for an unknown site); `t` is its time. */
  site(ref: string): { readonly t: number };
  /** The device (404 for an unknown device). */
  device(ref: string): unknown;
  measure(ref: string, property: string): Measurement;
  /** measure() serialised (kept while the model's state does not change). */
  measureJson(ref: string, property: string): string;
  measureMany(ref: string, properties: string[]): { reference: string; items: MeasurementListItem[] };
  timeSeries(ref: string, req: TimeSeriesRequest): TimeSeriesResponse;
  steer<E extends SteeringEndpoint>(siteRef: string, endpoint: E, body: SteeringBodies[E]): object;
  steeringState(siteRef: string): SteeringState;
  siteState(siteRef: string): SiteState;
}

export interface RouteContext {
  sim: RoutedSimulator;
  /** Values of the `:ref` segments, in order. */
  params: readonly string[];
  query: string;
  body: unknown;
  requestId: string;
}
