/**
 * The redis package is an optional peer dependency: an install without a group neither carries
 * nor loads it. A config node with a group on a Node-RED whose user directory lacks it is refused
 * naming redisUrl and how to install the package. The package's absence is made here by making
 * its resolution fail (the test's own node_modules has it, as a devDependency).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import Module from 'node:module';
import path from 'node:path';
import { GroupConnection } from '../../../src/runtime/group';
import { ValidationError } from '../../../src/protocol';

type Load = (request: string, parent: unknown, isMain: boolean) => unknown;

describe('group: the redis package is optional', () => {
  const mod = Module as unknown as { _load: Load };
  let original: Load;
  before(() => {
    original = mod._load;
    mod._load = function (request, parent, isMain) {
      if (request === 'redis')
        throw Object.assign(new Error(`Cannot find module '${request}'`), { code: 'MODULE_NOT_FOUND' });
      return original.call(this, request, parent, isMain);
    };
  });
  after(() => {
    mod._load = original;
  });

  it('loading every node of the package (dist/, as Node-RED does) loads neither redis nor undici', () => {
    const root = path.resolve(__dirname, '..', '..', '..');
    const script = `for (const f of Object.values(require('./package.json')['node-red'].nodes)) require('./' + f);
      console.log(JSON.stringify(Object.keys(require.cache).filter((f) => /node_modules[\\/](redis|@redis|undici)[\\/]/.test(f)).length));`;
    assert.equal(execFileSync(process.execPath, ['-e', script], { cwd: root, encoding: 'utf8' }).trim(), '0');
  });

  it('a group without the package installed is refused naming redisUrl and how to install it', () => {
    assert.throws(
      () => new GroupConnection({ url: 'redis://127.0.0.1:6379' }),
      (e: unknown) =>
        e instanceof ValidationError &&
        e.field === 'redisUrl' &&
        /the redis package \(node-redis 6\) is not installed: install it .*npm install redis@6/.test(e.message),
    );
  });
});
