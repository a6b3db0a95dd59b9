'use strict';
/**
 * The Node-RED flow of the read-overhead benchmark, started in this process: ems-device-read on a
 * config node without caps and on one with caps never reached, the core flow (change -> http
 * request -> json), and a minimal custom node calling tuned axios on the package's transport
 * (the reference); every answer goes to the node `sink`, every error to `errs`.
 */
const red = require('./red');

const CONCURRENCY = 6;
const PROPS = 'soc,power,totalEnergyConsumed';

/** Starts the runtime and loads the flow against the simulator at `url`; `tunedU` is the reference node's axios. */
async function loadReadFlow(url, tunedU) {
  const minimalNode = (RED) =>
    RED.nodes.registerType('bench-axios', function BenchAxios(config) {
      RED.nodes.createNode(this, config);
      this.on('input', (msg, send, done) => {
        tunedU.get(`/devices/${msg.deviceReference}/measurements/map?properties=${PROPS}`).then((r) => {
          msg.payload = r.data;
          send(msg);
          done();
        }, done);
      });
    });
  await red.start();
  await red.load(
    [
      {
        id: 'cfg',
        type: 'ems-partner-config',
        baseUrl: url,
        simulator: false,
        authType: 'none',
        concurrency: CONCURRENCY,
      },
      {
        id: 'cfgCap',
        type: 'ems-partner-config',
        baseUrl: url,
        simulator: false,
        authType: 'none',
        concurrency: CONCURRENCY,
        maxPerMinute: 1_000_000,
        maxPerDay: 100_000_000,
      },
      {
        id: 'ours',
        type: 'ems-device-read',
        server: 'cfg',
        mode: 'map',
        device: '',
        deviceType: 'str',
        properties: PROPS,
        propertiesType: 'str',
        wires: [['sink']],
      },
      {
        id: 'oursCap',
        type: 'ems-device-read',
        server: 'cfgCap',
        mode: 'map',
        device: '',
        deviceType: 'str',
        properties: PROPS,
        propertiesType: 'str',
        wires: [['sink']],
      },
      {
        id: 'chg',
        type: 'change',
        wires: [['req']],
        rules: [
          {
            t: 'set',
            p: 'url',
            pt: 'msg',
            to: `"${url}/devices/" & deviceReference & "/measurements/map?properties=${PROPS}"`,
            tot: 'jsonata',
          },
        ],
      },
      {
        id: 'req',
        type: 'http request',
        method: 'GET',
        ret: 'txt',
        paytoqs: 'ignore',
        url: '',
        persist: true,
        tls: '',
        proxy: '',
        authType: '',
        senderr: false,
        headers: [],
        wires: [['js']],
      },
      { id: 'js', type: 'json', property: 'payload', action: '', pretty: false, wires: [['sink']] },
      { id: 'minimal', type: 'bench-axios', wires: [['sink']] },
      { id: 'catch', type: 'catch', scope: null, uncaught: false, wires: [['errs']] },
      { id: 'sink', type: 'helper' },
      { id: 'errs', type: 'helper' },
    ],
    ['change', 'httpRequest', 'json'],
    [minimalNode],
  );
}

module.exports = { loadReadFlow, CONCURRENCY, PROPS };
