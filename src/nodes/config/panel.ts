/**
 * The config node's editor code (window.EmsPartnerConfigPanel, resources/config-panel.js), which
 * ems-partner-config.html names in its definition: the validators (numeric ones from the runtime's table of
 * limits, the paths and the API key's header by the runtime's own rules: resources/paths.js,
 * resources/request-path.js), the label, and the form: its sections, the simulator's address, the request
 * budget's counts and "Test connection" (the admin routes, src/nodes/config/admin-routes.ts).
 */
import type { EditorNode, Validator } from '../../editor/editor';
import type { PathKey } from '../../protocol/paths';
import { attachTest } from './panel-test';

const NODE_TYPE = 'ems-partner-config';
const PREFIX = 'node-config-input';
function E(): Window['EmsPartnerEditor'] {
  return window.EmsPartnerEditor;
}
const i18n = E().t;
const fieldRules = E().validators(NODE_TYPE);
export const LIMITS = E().limits().LIMITS;
const NUMBERS = [
  'timeout',
  'retries',
  'concurrency',
  'coalesceMs',
  'maxBodyMB',
  'maxValidity',
  'maxPerMinute',
  'maxPerDay',
  'maxWaiting',
] as const;

function cfield(node: EditorNode, name: string): unknown {
  return E().field(node, name, PREFIX);
}
function remote(node: EditorNode): boolean {
  const sim = cfield(node, 'simulator');
  return sim === false || sim === 'false';
}
function paths(): NonNullable<Window['EmsPartnerPaths']> {
  return window.EmsPartnerPaths as NonNullable<Window['EmsPartnerPaths']>;
}
/** A configured path (pathDevices, …) by the runtime's rules: true, or the runtime's refusal. Empty is the default. */
export function pathRefusal(key: PathKey, value: unknown): true | string {
  const rules = window.EmsPartnerPaths;
  if (!rules || value === undefined) {
    return true;
  }
  return E().runtimeCheck('', function () {
    rules.validatePath(key, value);
  });
}
/** The API key's header name by the runtime's rule: true, or its refusal (not an HTTP token, or a header the transport sets). */
export function headerNameRefusal(value: unknown): true | string {
  const rules = window.EmsPartnerRequestPath;
  if (!rules || value === undefined) {
    return true;
  }
  return E().runtimeCheck('apiKeyHeader', function () {
    rules.checkHeaderName(value, 'apiKeyHeader');
  });
}
/** true when keys would travel in clear text: plain http to a host that is not loopback. */
export function cleartextRisk(url: unknown): boolean {
  let parsed: URL;
  try {
    parsed = new URL(String(url || '').trim());
  } catch {
    return false;
  }
  if (parsed.protocol !== 'http:') {
    return false;
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return !(host === 'localhost' || /\.localhost$/.test(host) || /^127\./.test(host) || host === '::1');
}
function pathCheck(key: PathKey): Validator {
  return fieldRules.named(paths().PATH_SETTINGS[key].property, function (value) {
    return pathRefusal(key, value);
  });
}
function withAuth(authType: string, label: string, check: (value: unknown) => boolean | string): Validator {
  return fieldRules.named(label, function (value) {
    return !remote(this) || cfield(this, 'authType') !== authType || check(value);
  });
}

export const validate: Record<string, Validator> = {
  baseUrl: fieldRules.named('baseUrl', function (value) {
    return !remote(this) || /^https?:\/\/[^\s/?#]+/i.test(String(value || '').trim()) || i18n('errors.baseUrl');
  }),
  apiKeyHeader: withAuth('header', 'apiKeyHeader', function (value) {
    return String(value || '') === '' ? i18n('errors.apiKeyHeader') : headerNameRefusal(value);
  }),
  tokenUrl: withAuth('oauth2', 'tokenUrl', function (value) {
    return /^https?:\/\/\S+$/i.test(String(value || '').trim()) || i18n('errors.tokenUrl');
  }),
  clientId: withAuth('oauth2', 'clientId', function (value) {
    return String(value || '').trim() !== '' || i18n('errors.clientId');
  }),
  // The group's Redis (runtime/group/connection.ts checkRedisUrl): '' = no group; no user or password in the URL.
  redisUrl: fieldRules.named('redisUrl', function (value) {
    const url = String(value || '').trim();
    return url === '' || /^rediss?:\/\/[^\s@/?#]+(\/\d{1,2})?\/?$/i.test(url) || i18n('errors.redisUrl');
  }),
};
NUMBERS.forEach(function (key) {
  validate[key] = fieldRules.limit(key);
});
paths().PATH_KEYS.forEach(function (key) {
  validate[paths().PATH_SETTINGS[key].property] = pathCheck(key);
});

export function label(this: RedEditorNode): string {
  if (this.name) {
    return this.name as string;
  }
  if (this.simulator) {
    return i18n('label.builtIn');
  }
  try {
    return new URL(this.baseUrl as string).host || (this.baseUrl as string);
  } catch {
    return (this.baseUrl as string) || NODE_TYPE;
  }
}

// The rows of the simulator or of a service, and of its kind of authentication.
function showConnection(): void {
  const $sim = $('#node-config-input-simulator'),
    $auth = $('#node-config-input-authType'),
    $url = $('#node-config-input-baseUrl');
  function update(): void {
    const sim = $sim.prop('checked'),
      auth = $auth.val() || 'none';
    $('#node-config-service-rows').toggle(!sim);
    $('#node-config-simulator-url-row').toggle(!!sim);
    $('.node-config-auth-row').toggle(false);
    $('.node-config-auth-' + auth).toggle(true);
    $('#node-config-apiKey-key').toggle(auth !== 'bearer');
    $('#node-config-apiKey-token').toggle(auth === 'bearer');
    $('#node-config-input-baseUrl-warning').toggle(!sim && cleartextRisk($url.val()));
  }
  $sim.add($auth).on('change', update);
  $url.on('input change', update);
  update();
}
// Endpoints: collapsed unless a setting differs from its default; placeholders are the defaults.
function showEndpoints(node: RedEditorNode): void {
  const rules = paths();
  rules.PATH_KEYS.forEach(function (key) {
    $('#' + PREFIX + '-' + rules.PATH_SETTINGS[key].property).attr('placeholder', rules.DEFAULT_PATHS[key]);
  });
  const $endpoints = $('#node-config-endpoints'),
    $toggle = $('#node-config-endpoints-toggle');
  function show(open: boolean): void {
    $endpoints.toggle(open);
    $toggle.toggleClass('ems-partner-open', open);
  }
  const changed = rules.PATH_KEYS.some(function (key) {
    return String(cfield(node, rules.PATH_SETTINGS[key].property) || '').trim() !== '';
  });
  show(changed || (cfield(node, 'percentCurtailment') || 'convert') !== 'convert');
  $toggle.on('click', function (event) {
    event.preventDefault();
    show(!$endpoints.is(':visible'));
  });
}
// Where the built-in simulator listens (it starts with the first node or test using it).
function showSimulator(): void {
  $.ajax({ url: 'ems-partner/simulator', type: 'GET', dataType: 'json', timeout: 10000 }).then(
    function (answer) {
      const sim = answer as { running?: boolean; url?: string } | undefined;
      const text =
        sim && sim.running && sim.url ? i18n('simulator.url', { url: sim.url }) : i18n('simulator.notRunning');
      $('#node-config-simulator-url').text(text);
    },
    function () {
      $('#node-config-simulator-url').text('');
    },
  );
}
/** The counts of one window of the runtime's BudgetStats (src/runtime/budget-caps.ts), as the stats route answers. */
interface WindowCounts {
  sent: number;
  retried: number;
  rateLimited: number;
  failed: number;
  refused: number;
}
type BudgetStats = Record<'lastMinute' | 'lastHour' | 'lastDay', WindowCounts>;
// The request budget's counts as one line.
function budgetText(stats: BudgetStats | undefined): string {
  if (!stats || !stats.lastMinute) {
    return '';
  }
  return i18n('budget.counts', {
    minute: stats.lastMinute.sent,
    hour: stats.lastHour.sent,
    day: stats.lastDay.sent,
    retried: stats.lastDay.retried,
    rateLimited: stats.lastDay.rateLimited,
    failed: stats.lastDay.failed,
    refused: stats.lastDay.refused,
  });
}
// The deployed configuration's request counts (GET ems-partner/stats/:id, read permission): under the
// budget settings, and after "Test connection" next to its result (the test's own request counted).
function showBudget(node: RedEditorNode, afterTest: boolean): void {
  $.ajax({
    url: 'ems-partner/stats/' + encodeURIComponent(node.id),
    type: 'GET',
    dataType: 'json',
    timeout: 10000,
  }).then(
    function (stats) {
      const text = budgetText(stats as BudgetStats | undefined);
      $('#node-config-budget-counts').text(text);
      if (afterTest) {
        $('#node-config-test-budget').text(text).toggle(true);
      }
    },
    function () {
      $('#node-config-budget-counts').text(i18n('budget.notDeployed'));
      if (afterTest) {
        $('#node-config-test-budget').text('').toggle(false); // no empty box before a deploy
      }
    },
  );
}
export function oneditprepare(this: RedEditorNode): void {
  E().upgradeForm(this, PREFIX + '-'); // a node of an older version (migrations.js), and its open form
  showConnection();
  NUMBERS.forEach(function (key) {
    // range from the table; a flow saved before a setting existed shows its default
    const $el = E().bounds($('#' + PREFIX + '-' + key), key);
    if (String($el.val()).trim() === '') {
      $el.val(LIMITS[key].dflt);
    }
  });
  showEndpoints(this);
  showSimulator();
  showBudget(this, false);
  attachTest(this, () => {
    showSimulator();
    showBudget(this, true);
  });
}
