/**
 * Raw requests: the `ems-request` node sends msg.method, msg.path and msg.body through
 * the config node's client. Round trips on the simulator and on a counting server; every
 * refused form of msg.path (and a bad method, a GET body, a body over maxBodyMB) ends in one
 * Catch-able error naming the field and the accepted form, with NOTHING sent (counted at the
 * server, or in the simulator's request log); credentials the service echoes in headers and
 * body never reach msg.headers, the message or an error; an answer over maxBodyMB fails; text
 * stays text; a non-2xx answer is a Catch-able error whose message carries the answer.
 */
import assert from 'node:assert/strict';
import { Redactor } from '../../../src/client/errors';
import { answerPayload, selectHeaders } from '../../../src/client/any-endpoint';
import { checkRequestPath, requestPathProblem, requestUrl } from '../../../src/client/request-path';
import { EmsClient } from '../../../src/client/client';
import { startCounting, type CountingServer } from '../../helpers/counting-server';
import { cfg, flow, loadFlow, useRuntime, type Loaded } from '../../helpers/red';
import { refused, req } from './refusal';

describe('ems-request: raw requests through the config node', () => {
  describe('refused forms of msg.path: each sends nothing (counted at the server)', () => {
    let srv: CountingServer;
    before(async () => {
      srv = await startCounting();
    });
    after(async () => {
      await srv.close();
    });
    useRuntime();
    /** The node on the counting server below /v1; `check` runs the refusals, then nothing may have reached the server. */
    async function nothingSent(check: (f: Loaded) => Promise<void>): Promise<void> {
      const deployed = await loadFlow(flow(req(), cfg(`${srv.url}/v1`)));
      srv.requests.length = 0;
      await check(deployed);
      assert.deepEqual(
        srv.requests.map((r) => r.url),
        [],
        'nothing reached the server',
      );
      // The same node still sends a good path (to the counting server, below /v1).
      assert.equal((await deployed.ask({ path: '/devices' })).payload.url, '/v1/devices');
    }
    const host = () => srv.url.replace(/^http:\/\//, '');

    it("absolute URLs, even to the base URL's own host: http://, https://", () =>
      nothingSent(async (f) => {
        await refused(f, { path: `${srv.url}/v1/devices` }, 'msg.path', /: an absolute URL \(scheme "http:"\)$/);
        await refused(f, { path: 'https://evil.example/steal' }, 'msg.path', /: an absolute URL \(scheme "https:"\)$/);
        await refused(f, { path: 'HTTP://evil.example/' }, 'msg.path', /\(scheme "http:"\)$/);
      }));

    it('any other scheme: mailto:, javascript:, file:, data:', () =>
      nothingSent(async (f) => {
        for (const [p, s] of [
          ['mailto:a@evil.example', 'mailto:'],
          ['javascript:alert(1)', 'javascript:'],
          ['file:///etc/passwd', 'file:'],
          ['data:text/plain,x', 'data:'],
        ]) {
          await refused(f, { path: p }, 'msg.path', `: an absolute URL (scheme "${s}")`);
        }
      }));

    it('scheme-relative //host (also to the own host)', () =>
      nothingSent(async (f) => {
        await refused(
          f,
          { path: '//evil.example/steal' },
          'msg.path',
          '"//evil.example/steal": a scheme-relative URL ("//host")',
        );
        await refused(f, { path: `//${host()}/v1/devices` }, 'msg.path', /a scheme-relative URL/);
      }));

    it('.. segments (and . segments, and "..;")', () =>
      nothingSent(async (f) => {
        for (const p of ['/../devices', '/devices/..', '/a/../../x', '/./devices', '/..;/admin']) {
          await refused(f, { path: p }, 'msg.path', ': a "." or ".." segment');
        }
      }));

    it('encoded dots %2e%2e, %2E%2e, .%2e, %2e, and encoded slashes', () =>
      nothingSent(async (f) => {
        for (const p of [
          '/%2e%2e/devices',
          '/%2E%2e/devices',
          '/.%2e/devices',
          '/%2e/devices',
          '/x/%2E%2E',
          '/..%2fadmin',
          '/a%2F..%2Fb',
        ]) {
          await refused(f, { path: p }, 'msg.path', ': an encoded dot, slash or backslash (%2e, %2f, %5c) in the path');
        }
      }));

    it('backslashes: \\\\host, /\\host, \\.., encoded %5c and %5C', () =>
      nothingSent(async (f) => {
        for (const p of ['\\\\evil.example\\x', '/\\evil.example', '/devices\\..\\admin', '\\devices']) {
          await refused(f, { path: p }, 'msg.path', ': a backslash');
        }
        for (const p of ['/%5cevil.example', '/%5Cevil.example/x']) {
          await refused(f, { path: p }, 'msg.path', ': an encoded dot, slash or backslash (%2e, %2f, %5c) in the path');
        }
      }));

    it('spaces, control characters, a fragment, a bad % escape, characters a path does not hold, no leading "/"', () =>
      nothingSent(async (f) => {
        await refused(f, { path: '/devices x' }, 'msg.path', ': a space or control character');
        await refused(f, { path: '/devices\r\nX-Injected: 1' }, 'msg.path', ': a space or control character');
        await refused(f, { path: '/devices\u0000' }, 'msg.path', ': a space or control character');
        await refused(f, { path: '/devices#frag' }, 'msg.path', ': a fragment ("#")');
        await refused(f, { path: '/devices%zz' }, 'msg.path', ': a "%" not followed by two hex digits');
        await refused(
          f,
          { path: '/dev<ices>' },
          'msg.path',
          ': the character "<" (encode it, e.g. with encodeURIComponent)',
        );
        await refused(
          f,
          { path: '/gerät' },
          'msg.path',
          ': the character "ä" (encode it, e.g. with encodeURIComponent)',
        );
        await refused(f, { path: 'devices' }, 'msg.path', ': not starting with "/"');
        await refused(f, { path: '' }, 'msg.path', 'got "": empty');
        await refused(f, { path: 42 }, 'msg.path', 'got 42: not a string');
        await refused(f, { path: `/${'x'.repeat(2100)}` }, 'msg.path', ': longer than 2048 characters');
      }));

    it('a bad method: TRACE, CONNECT, HEAD, OPTIONS, a number', () =>
      nothingSent(async (f) => {
        for (const m of ['TRACE', 'connect', 'HEAD', 'OPTIONS']) {
          await refused(
            f,
            { method: m, path: '/devices' },
            'msg.method',
            `must be one of GET, POST, PUT, PATCH, DELETE (any case); got ${JSON.stringify(m)}`,
          );
        }
        await refused(f, { method: 7, path: '/devices' }, 'msg.method', /got 7$/);
      }));

    it('a body with GET, a body that is not JSON, a body over maxBodyMB', async () => {
      const deployed = await loadFlow(flow(req(), cfg(srv.url, { maxBodyMB: 1 })));
      srv.requests.length = 0;
      await refused(deployed, { path: '/x', body: { a: 1 } }, 'msg.body', /must not be set for GET/);
      const circular: any = { a: 1 };
      circular.self = circular;
      await refused(
        deployed,
        { method: 'POST', path: '/x', body: circular },
        'msg.body',
        /must be JSON .*cannot be sent as JSON/,
      );
      const caught = await deployed.fails({ method: 'POST', path: '/x', body: { blob: 'x'.repeat(1024 * 1024) } });
      assert.equal(
        caught.error.message,
        'BadResponseError: POST /x request body is over the limit of 1 MB (maxBodyMB); not sent',
      );
      assert.equal(caught.error.code, 'EMS_TOO_LARGE');
      assert.deepEqual(srv.requests, []);
    });

    it("paths that only look like another host stay on the base URL's origin and below its path", async () => {
      const deployed = await loadFlow(flow(req(), cfg(`${srv.url}/v1`)));
      srv.requests.length = 0;
      for (const p of [
        '/@evil.example/x',
        '/evil.example:80/x',
        '/%40evil.example',
        '/x?next=//evil.example/&u=http://evil.example',
      ]) {
        assert.equal((await deployed.ask({ path: p })).payload.url, `/v1${p}`, p);
      }
      assert.equal(srv.requests.length, 4);
      // Joined as the client joins it; the URL a parser reads stays on the origin, below /v1.
      for (const p of ['/@evil.example/x', '/x?u=http://evil.example'])
        assert.equal(requestUrl(`${srv.url}/v1/`, p, 'msg.path'), `${srv.url}/v1${p}`);
      assert.throws(() => requestUrl('http://127.0.0.1:1/v1', '/..', 'msg.path'), /"\.\." segment/);
    });
  });

  describe('the client and its parts', () => {
    it('raw() on a closed client sends nothing; requestPathProblem accepts good paths', async () => {
      const srv = await startCounting();
      try {
        const client = new EmsClient({ baseUrl: srv.url, retries: 0 });
        assert.equal((await client.raw('GET', '/ok?x=1&y=a,b')).statusCode, 200);
        client.close();
        await assert.rejects(client.raw('GET', '/x'), /not sent: client closed/);
        assert.equal(srv.requests.length, 1);
      } finally {
        await srv.close();
      }
      for (const p of [
        '/devices',
        '/devices/dvc_1/measurement?property=soc',
        '/sites/ste%201/x',
        '/a:b/@c',
        "/x!$&'()*+,;=",
        '/x?a=b/c?d',
      ]) {
        assert.equal(requestPathProblem(p), undefined, p);
        assert.equal(checkRequestPath(p, 'msg.path'), p);
      }
    });

    it('answers: keys and values masked, every encoding; JSON nested deeper than 64 levels stays text; headers selected', () => {
      const redactor = new Redactor(['s3cr3t-KEY/+=']);
      const deep = `${'['.repeat(70)}1${']'.repeat(70)}`;
      assert.equal(answerPayload(deep, redactor), deep);
      // (JSON may escape "/" as "\/": the text does not hold the secret, the parsed value does.)
      const json = `{"s3cr3t-KEY/+=":1,"a":["x s3cr3t-KEY/+= y","${Buffer.from('s3cr3t-KEY/+=').toString('base64')}"],"u":"s3cr3t-KEY\\/+="}`;
      const payload = answerPayload(json, redactor) as any;
      assert.deepEqual(payload, { '***': 1, a: ['x *** y', '***'], u: '***' });
      const headers = selectHeaders(
        {
          'Content-Type': 'application/json',
          'X-Api-Key': 's',
          Authorization: 'Bearer s',
          'Set-Cookie': ['a=1'],
          'X-My-Key': 'v',
          'x-request-id': 'id s3cr3t-KEY/+=',
        },
        redactor,
        'x-request-id',
      );
      assert.deepEqual(
        headers,
        { 'content-type': 'application/json' },
        'the configured key header is never relayed, even one named like a listed header',
      );
    });
  });
});
