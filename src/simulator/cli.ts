#!/usr/bin/env node
/**
 * ems-partner-sim: runs the reference simulator of the partner API.
 * Prints exactly one line on stdout once listening: `ems-partner-sim listening on http://HOST:PORT`.
 * Stops cleanly on SIGINT / SIGTERM (exit 0). Bad arguments: message on stderr, exit 2.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_PATHS, PATH_KEYS, validatePath } from '../protocol';
import type { ApiPaths } from '../protocol';
import { buildRoutes } from './routes';
import { startSimulator, type StartOptions } from './index';

const USAGE = `Usage: ems-partner-sim [options]

Reference simulator of the EMS partner API (two sites: commercial and home).

Options:
  --host <host>         interface to bind (default 127.0.0.1)
  --port <port>         port, 0 = any free port (default 8787)
  --api-key <key>       require x-api-key: <key> or Authorization: Bearer <key>
  --seed <n>            seed of weather, load, faults and request IDs (default 1)
  --latency <ms>        added latency per request, ms (default 0)
  --fault-rate <0..1>   share of faulted requests: half 500, a quarter 429, a quarter resets
  --path-devices <p>    serve the device list on <p> instead of /devices
  --path-sites <p>      serve the site list on <p> instead of /sites
  --path-curtailment <p>  curtailment steering on <p> (<site> for the site), instead of
                        /sites/<site>/steering/curtailment
  --path-grid-limits <p>  grid-limits steering on <p> (<site> for the site), instead of
                        /sites/<site>/steering/grid-limits
  --help                show this help

Control endpoints (no key needed): GET /sim/stats, GET /sim/log, GET|POST /sim/faults,
GET|POST /sim/clock {advanceMs}, POST /sim/reset.
`;

class UsageError extends Error {}

function num(v: string | undefined, name: string, check: (n: number) => boolean, what: string): number | undefined {
  if (v === undefined) return undefined;
  const value = Number(v);
  if (v.trim() === '' || !Number.isFinite(value) || !check(value))
    throw new UsageError(`--${name} must be ${what}; got ${JSON.stringify(v)}`);
  return value;
}

export function parseCli(argv: string[]): { help: true } | { help: false; opts: StartOptions } {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        host: { type: 'string' },
        port: { type: 'string' },
        'api-key': { type: 'string' },
        seed: { type: 'string' },
        latency: { type: 'string' },
        'fault-rate': { type: 'string' },
        'path-devices': { type: 'string' },
        'path-sites': { type: 'string' },
        'path-curtailment': { type: 'string' },
        'path-grid-limits': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (values.help) return { help: true };
  const str = (k: string) => values[k] as string | undefined;
  const host = str('host') ?? '127.0.0.1';
  if (host.trim() === '') throw new UsageError('--host must not be empty');
  const apiKey = str('api-key');
  if (apiKey !== undefined && apiKey === '') throw new UsageError('--api-key must not be empty');
  const opts: StartOptions = {
    host,
    port:
      num(str('port'), 'port', (n) => Number.isInteger(n) && n >= 0 && n <= 65535, 'an integer from 0 to 65535') ??
      8787,
    apiKey,
    seed: num(str('seed'), 'seed', (n) => Number.isInteger(n), 'an integer') ?? 1,
    latencyMs: num(str('latency'), 'latency', (n) => n >= 0 && n <= 60_000, 'a number of ms from 0 to 60000'),
    faultRate: num(str('fault-rate'), 'fault-rate', (n) => n >= 0 && n <= 1, 'a number from 0 to 1'),
  };
  const paths: Partial<ApiPaths> = {};
  for (const key of PATH_KEYS) {
    const flag = `path-${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    const value = str(flag);
    if (value === undefined) continue;
    if (value.trim() === '') throw new UsageError(`--${flag} must not be empty`);
    try {
      paths[key] = validatePath(key, value);
    } catch (e) {
      throw new UsageError(`--${flag} ${(e as Error).message.replace(/^\S+ /, '')}`);
    }
  }
  if (Object.keys(paths).length > 0) {
    try {
      buildRoutes({ ...DEFAULT_PATHS, ...paths }); // two endpoints on one path and method
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    opts.paths = paths;
  }
  return { help: false, opts };
}

async function main(): Promise<void> {
  let parsed: ReturnType<typeof parseCli>;
  try {
    parsed = parseCli(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`ems-partner-sim: ${(e as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (parsed.help) {
    process.stdout.write(USAGE);
    return;
  }
  // Signal handlers first: the listening line is written synchronously to a pipe, and a
  // supervisor may signal the moment it reads it.
  let started: Awaited<ReturnType<typeof startSimulator>> | undefined;
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    if (!started) process.exit(0);
    started.close().then(
      () => process.exit(0),
      () => process.exit(0),
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  try {
    started = await startSimulator(parsed.opts);
  } catch (e) {
    process.stderr.write(`ems-partner-sim: cannot start: ${(e as Error).message}\n`);
    process.exit(1);
  }
  if (stopping) {
    await started.close();
    process.exit(0);
  }
  process.stdout.write(`ems-partner-sim listening on ${started.url}\n`);
}

if (require.main === module) void main();
