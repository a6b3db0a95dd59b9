/**
 * The runtime room's edges (src/runtime), part 2: delivery checks given hostile answers, bad
 * devices, aborted signals, very long waits and listeners that throw; building a runtime from
 * config-node settings that are wrong; the built-in simulator failing to start. Reads are a
 * fake coalescer that records what it was asked; time is a fake clock.
 */
import assert from 'node:assert/strict';
import net from 'node:net';

describe('runtime coverage: the built-in simulator that fails to start', function () {
  this.timeout(20_000);
  it('a failed start (port taken) rejects, is forgotten and tried again; a logger that throws does not stop it', async () => {
    // A fresh copy of the module: the built-in simulator is kept for the life of the process once started.
    const id = require.resolve('../../src/runtime/builtin-simulator');
    const cached = require.cache[id];
    delete require.cache[id];
    const fresh =
      require('../../src/runtime/builtin-simulator') as typeof import('../../src/runtime/builtin-simulator');
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const saved = process.env.EMS_SIM_PORT;
    try {
      process.env.EMS_SIM_PORT = String((blocker.address() as net.AddressInfo).port);
      await assert.rejects(fresh.builtInSimulatorUrl(), /EADDRINUSE/);
      assert.deepEqual(fresh.builtInSimulatorState(), { running: false, url: null });
      delete process.env.EMS_SIM_PORT;
      fresh.setSimulatorLog(() => {
        throw new Error('logger broke');
      });
      const url = await fresh.builtInSimulatorUrl();
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.deepEqual(fresh.builtInSimulatorState(), { running: true, url });
      assert.equal(await fresh.builtInSimulatorUrl(), url, 'started once');
    } finally {
      if (saved === undefined) delete process.env.EMS_SIM_PORT;
      else process.env.EMS_SIM_PORT = saved;
      await new Promise((r) => blocker.close(r));
      if (cached) require.cache[id] = cached;
      else delete require.cache[id];
    }
  });
});
