/**
 * The undici adapter's target of a request (src/client/undici-adapter.ts targetOf): the parts it
 * takes apart itself for a plain path below a plain base URL are exactly the URL parser's, for
 * every form of base and path, plain or not (those go through the parser).
 */
import assert from 'node:assert/strict';
import { fullPathOf, targetOf } from '../../../src/client/undici-adapter';

const BASES = [
  'http://127.0.0.1:8080',
  'http://127.0.0.1:8080/',
  'https://api.example.com/v1',
  'https://api.example.com/v1//',
  'http://API.example.com/v1',
  'http://example.com:80/x',
  'https://user:pw@example.com/v1',
  'http://example.com/a%20b',
  'http://example.com/v1?x=1',
  'http://[::1]:9000/api',
  'http://example.com/./v1',
  'http://example.com/v1/../v2',
];
const PATHS = [
  '/devices/dvc_1/measurements/map?properties=soc,power',
  '/sites/site-1/steering/ess',
  'devices',
  '/devices?',
  '/devices?a',
  '/a/./b',
  '/a/../b',
  '/a/%2e%2E/b',
  '/a/.%2e',
  '/a/..',
  '/a/.hidden/b',
  "/a'b?c='d'",
  '/a b',
  '/a|b',
  '/a%zz?x=%zz',
  '/a?b?c',
  '/a//b',
  '/%C3%A9?q=%C3%A9',
  '/ümlaut',
  '/a#frag',
  '/a\\b',
  '/a@b:c;d=e,f',
  '/?x=1',
  '//other.host/x',
];

describe('undici adapter: the target of a request', () => {
  it("is the URL parser's origin, host, protocol, path and query, credentials for every base and path", () => {
    let fast = 0;
    for (const base of BASES) {
      for (const p of PATHS) {
        const full = fullPathOf(base, p, undefined);
        let want: unknown;
        try {
          const url = new URL(full);
          want = {
            origin: url.origin,
            host: url.host,
            protocol: url.protocol,
            path: url.pathname + url.search,
            username: url.username,
            password: url.password,
          };
        } catch (e) {
          assert.throws(() => targetOf(full, base), { name: (e as Error).name }, `${base} + ${p}`);
          continue;
        }
        assert.deepEqual(targetOf(full, base), want, `${base} + ${p}`);
        if (!/@|\?x=1|%20|:80|\[|\.\/|\.\.|API/.test(base) && !/[^A-Za-z0-9\-._~!$&()*+,;=:@/?%]/.test(p)) fast++;
      }
    }
    assert.ok(fast > 20, 'plain bases and paths were among them');
  });
});
