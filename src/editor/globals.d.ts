/**
 * What the editor code (src/editor/, built by tsconfig.editor.json into resources/) finds in the
 * browser besides the DOM: Node-RED's editor (RED), its jQuery with jQuery UI and TypedInput ($),
 * and the scripts of resources/ (window.EmsPartner*). Only the parts the editor code uses, written
 * by hand (no dependency). The scripts' types are the runtime modules' own (type-only: nothing of
 * them is compiled into the editor code; scripts/copy-editor.js builds each into its own script).
 */

/** A node as the editor holds it: its saved properties (form values are strings), credentials typed in this session. */
interface RedEditorNode {
  id: string;
  type: string;
  changed?: boolean;
  credentials?: Record<string, unknown>;
  /** The node behind a proxy the editor hands to events (Node-RED 4). */
  __node__?: RedEditorNode;
  /** The catalogue of the node's type, when `this` is a node of a registered type (labels). */
  _?: (key: string, opts?: object) => string;
  [property: string]: unknown;
}

/** A registered node type's definition. */
interface RedNodeType {
  _?: (key: string, opts?: object) => string;
}

interface RedEditor {
  nodes: {
    getType(type: string): RedNodeType | undefined;
    node(id: string): RedEditorNode | undefined;
  };
  events: { on(event: string, handler: (node: RedEditorNode) => void): void };
  utils: {
    /** Added in Node-RED 3.1.x. */
    validateTypedProperty?(value: string, type: string, opt?: unknown): boolean | string;
  };
  settings: { apiRootUrl?: string };
}

declare const RED: RedEditor;

/** A promise of jQuery (Deferred): `done`/`fail` pass on every argument; `R` the arguments of a failure. */
interface JQueryPromise<T, R extends unknown[] = unknown[]> {
  done(handler: (value: T) => void): this;
  fail(handler: (...reason: R) => void): this;
  always(handler: () => void): this;
  then<U>(ok: (value: T) => U, failed?: (...reason: R) => void): JQueryPromise<U, R>;
}

interface JQueryDeferred<T, R extends unknown[] = unknown[]> extends JQueryPromise<T, R> {
  resolve(value: T): this;
  reject(...reason: R): this;
  promise(): JQueryPromise<T, R>;
}

/** A request of $.ajax; its failure passes (xhr, status, error). */
interface JQueryXHR extends JQueryPromise<unknown, JQueryAjaxFailure> {
  status: number;
  statusText: string;
  responseJSON?: { message?: string; error?: string };
}

type JQueryAjaxFailure = [xhr: JQueryXHR, status: string, error: string];

interface JQueryAjaxSettings {
  url: string;
  type?: string;
  contentType?: string;
  dataType?: string;
  data?: string;
  timeout?: number;
  cache?: boolean;
  global?: boolean;
}

/** Node-RED's TypedInput widget. */
interface TypedInputOptions {
  default: string;
  types: readonly string[];
  typeField: string;
}

interface JQuery {
  readonly length: number;
  val(): string | undefined;
  val(value: unknown): this;
  text(value: string): this;
  attr(name: string): string | undefined;
  attr(name: string | Record<string, unknown>, value?: unknown): this;
  prop(name: 'checked'): boolean;
  prop(name: string, value: unknown): this;
  is(selector: string): boolean;
  empty(): this;
  append(content: JQuery): this;
  appendTo(target: JQuery): this;
  add(other: JQuery): this;
  next(selector: string): JQuery;
  children(): JQuery;
  toggle(show: boolean): this;
  toggleClass(name: string, on: boolean): this;
  each(fn: (this: HTMLElement, index: number, element: HTMLElement) => void): this;
  on<E extends Element = HTMLElement>(events: string, handler: (this: E, event: Event) => void): this;
  on<E extends Element = HTMLElement>(events: string, selector: string, handler: (this: E, event: Event) => void): this;
  typedInput(method: 'type' | 'value'): string;
  typedInput(method: 'value', value: string): this;
  typedInput(options: TypedInputOptions): this;
  spinner(options: { min?: number; max?: number }): this;
}

interface JQueryStatic {
  (selector?: string | Element): JQuery;
  ajax(settings: JQueryAjaxSettings): JQueryXHR;
  Deferred<T, R extends unknown[] = unknown[]>(): JQueryDeferred<T, R>;
  extend<T>(deep: true, target: object, source: T): T;
}

declare const $: JQueryStatic;

/** The scripts of resources/ (each sets its global when loaded; the panels' scripts load in any order). */
interface Window {
  EmsPartnerLimits: typeof import('../protocol/limits');
  EmsPartnerMigrations?: typeof import('../nodes/shared/migrations');
  EmsPartnerConfigKeys: typeof import('../nodes/config/config-keys');
  EmsPartnerPaths?: typeof import('../protocol/paths');
  EmsPartnerRequestPath?: typeof import('../client/request-path');
  EmsPartnerSteerRules: typeof import('../protocol/steer-rules');
  EmsPartnerPlanInput?: typeof import('../nodes/plan/check');
  EmsPartnerEditor: typeof import('./editor');
  EmsPartnerSiteSteerPanel: typeof import('../nodes/site-steer/panel');
}
