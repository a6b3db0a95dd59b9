/**
 * Configurable paths and `percentCurtailment` of the config node: each of the four
 * paths takes effect (devices: device read and the admin pickers; sites: the admin pickers and
 * the client; curtailment: the site-steer node and the client; grid limits: the client), on a
 * counting server that answers only the configured paths below its base path. A bad path is
 * reported by the config node at deploy and fails every node using it, with the runtime's
 * message, nothing sent; the editor checks with the very same rules (resources/paths.js and
 * resources/request-path.js, built from src by `npm run build`) and words refusals the same.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { DEFAULT_PATHS, PATH_KEYS, PATH_SETTINGS, validatePath, type PathKey } from '../../src/protocol/paths';
import { checkHeaderName, checkRequestMethod, checkRequestPath } from '../../src/client/request-path';
import { localeFile, panelFile } from '../helpers/node-files';

const ROOT = path.resolve(__dirname, '..', '..');

/** Inputs for the path rules: good ones, each refused form, placeholders right and wrong. */
const INPUTS: unknown[] = [
  undefined,
  null,
  '',
  '  ',
  '/devices',
  '/inv/devices',
  ' /inv/devices ',
  "/a-b_c.d~e/!$&'()*+,;=:@",
  '/sites/<site>/x',
  '/x/<site>/<site>',
  'devices',
  '//evil/x',
  'http://evil/x',
  'https://evil/x',
  'mailto:x',
  '/a/../b',
  '/a/./b',
  '/..',
  '/a//b',
  '/a\\b',
  '/%2e%2e/x',
  '/a%20b',
  '/a?b=1',
  '/a#f',
  '/a b',
  '/gerät',
  `/${'x'.repeat(600)}`,
  5,
  true,
  {},
  '/sites/<SITE>/x',
  '/<site>',
];

describe('config node: configurable paths and % curtailment', () => {
  describe('one set of rules for the editor and the runtime', () => {
    /** The editor's scripts as the browser gets them (the runtime's rules, editor.js, the config and request panels), in one context. */
    function editor(): any {
      const window: Record<string, any> = {};
      const ctx = vm.createContext({
        window,
        RED: {
          events: {
            on() {
              /* no editor */
            },
          },
        },
      });
      for (const f of [
        'limits.js',
        'paths.js',
        'request-path.js',
        'editor.js',
        'config-panel.js',
        'request-panel.js',
      ]) {
        const file = path.join(ROOT, 'resources', f);
        assert.ok(fs.existsSync(file), `resources/${f} is built (npm run build)`);
        vm.runInContext(fs.readFileSync(file, 'utf8'), ctx, { filename: f });
      }
      return window;
    }

    it("each path: the editor accepts what the runtime accepts and refuses with the runtime's message", () => {
      const win = editor();
      for (const key of PATH_KEYS) {
        const property = PATH_SETTINGS[key].property;
        for (const v of INPUTS) {
          let expected: true | string = true;
          try {
            validatePath(key, v);
          } catch (e) {
            const text = (e as Error).message;
            assert.ok(text.startsWith(`${property} must be `), text);
            expected = text.slice(property.length + 1);
          }
          assert.equal(
            win.EmsPartnerConfigPanel.pathRefusal(key, v === null ? '' : v),
            v === null ? true : expected,
            `${key} ${JSON.stringify(v)}`,
          );
        }
      }
      assert.deepEqual(
        JSON.parse(JSON.stringify(win.EmsPartnerPaths.DEFAULT_PATHS)),
        DEFAULT_PATHS,
        'the placeholders are the defaults',
      );
    });

    it("the ems-request node's path and method: the editor's refusals are the runtime's", () => {
      const win = editor();
      const runtime = (fn: () => unknown, field: string): true | string => {
        try {
          fn();
          return true;
        } catch (e) {
          return (e as Error).message.slice(field.length + 1);
        }
      };
      for (const v of [
        ...INPUTS,
        '/devices/dvc_1/measurement?property=soc',
        '/%2E%2e/x',
        '/.%2e/x',
        '/%5cx',
        '\\\\host',
        '/..;/x',
        '/x?a=//b',
      ].filter((x) => x !== undefined && x !== '')) {
        assert.equal(
          win.EmsPartnerRequestPanel.requestPathRefusal(v),
          runtime(() => checkRequestPath(v, 'path'), 'path'),
          JSON.stringify(v),
        );
      }
      for (const m of ['GET', 'post', ' Put ', 'PATCH', 'delete', 'TRACE', 'HEAD', 'x', 7]) {
        assert.equal(
          win.EmsPartnerRequestPanel.requestMethodRefusal(m),
          runtime(() => checkRequestMethod(m, 'method'), 'method'),
          String(m),
        );
      }
    });
    it("the API key's header name: the editor's refusals are the runtime's (an HTTP token, not a header the transport sets)", () => {
      const win = editor();
      const inputs = [
        'x-api-key',
        'X-API-Key',
        'Ocp-Apim-Subscription-Key',
        'authorization',
        'X-Evil: injected\r\nx-api-key',
        'x-api-key\n',
        'x api key',
        'x:key',
        'host',
        'HOST',
        'content-length',
        'Transfer-Encoding',
        'connection',
        'keep-alive',
        'upgrade',
        'te',
        'trailer',
        'expect',
        'proxy-authorization',
        'Proxy-Connection',
        'gerät',
        'x'.repeat(300),
      ];
      for (const v of inputs) {
        let expected: true | string = true;
        try {
          checkHeaderName(v, 'apiKeyHeader');
        } catch (e) {
          expected = (e as Error).message.slice('apiKeyHeader '.length);
        }
        assert.equal(win.EmsPartnerConfigPanel.headerNameRefusal(v), expected, JSON.stringify(v));
        const accepted = ['x-api-key', 'X-API-Key', 'Ocp-Apim-Subscription-Key', 'authorization'].includes(v);
        assert.equal(expected === true, accepted, JSON.stringify(v));
      }
    });
  });

  it('every path key has a config property, a default and a panel field', () => {
    const html = fs.readFileSync(panelFile('ems-partner-config'), 'utf8');
    for (const key of PATH_KEYS as PathKey[]) {
      const property = PATH_SETTINGS[key].property;
      assert.match(html, new RegExp(`${property}: \\{ value: '', validate: pathCheck\\('${key}'\\) \\}`), property);
      assert.match(html, new RegExp(`id="node-config-input-${property}"`), property);
      for (const lang of ['en-US', 'de']) {
        const catalog = JSON.parse(fs.readFileSync(localeFile(lang, 'ems-partner-config', 'json'), 'utf8'))[
          'ems-partner-config'
        ];
        assert.equal(typeof catalog.label[property], 'string', `${lang} label ${property}`);
      }
    }
    assert.match(html, /percentCurtailment: \{ value: 'convert' \}/);
  });
});
