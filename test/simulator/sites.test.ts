import assert from 'node:assert/strict';
import { DEFAULT_SITES, startSimulator } from '../../src/simulator/index';
import { call } from '../helpers/sim-http';

const T0 = Date.UTC(2026, 5, 21, 12, 0, 0); // a summer noon, UTC

const COM = DEFAULT_SITES[0];

describe('simulator: custom sites', () => {
  it('simulates the sites given, and refuses invalid definitions', async () => {
    const site = {
      ...COM,
      siteReference: 'ste_Cust0mSite01',
      name: 'Custom',
      battery: { ...COM.battery, deviceReference: 'dvc_Cust0mBatt01', initialSoc: 80 },
      pv: { ...COM.pv, deviceReference: 'dvc_Cust0mPv0001' },
      meter: { ...COM.meter, deviceReference: 'dvc_Cust0mMeter1' },
    };
    const started = await startSimulator({ sites: [site], frozen: true, startTime: T0 });
    try {
      const response = await call(started.url, 'GET', '/sites');
      assert.deepEqual(
        response.body.sites.map((x: any) => x.siteReference),
        ['ste_Cust0mSite01'],
      );
      assert.equal(
        (await call(started.url, 'GET', '/devices/dvc_Cust0mBatt01/measurement?property=soc')).body.value,
        80,
      );
      assert.equal(
        (await call(started.url, 'GET', `/devices/${COM.battery.deviceReference}/measurement?property=soc`)).status,
        404,
      );
    } finally {
      await started.close();
    }
    await assert.rejects(
      startSimulator({ sites: [{ ...site, battery: { ...site.battery, capacityWh: -1 } }] }),
      /capacityWh/,
    );
    await assert.rejects(startSimulator({ sites: [site, site] }), /duplicate/);
  });
});
