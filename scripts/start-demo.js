#!/usr/bin/env node
/**
 * `npm start`: Node-RED (the development dependency) with this package, the FlowFuse
 * dashboard and the demo flow (demo/flow.json) on the built-in simulator, plus an MQTT
 * broker (aedes, in this process) for examples 03-05 and 10.
 *
 *   PORT (default 1880, 0 = any free port), HOST (default 127.0.0.1)
 *   EMS_DEMO_USERDIR  user directory (default .demo-userdir/ in the project; tests use their own)
 *   EMS_MQTT_PORT     the broker's port on 127.0.0.1 (default 1883; when taken, the next free
 *                     one of the 10 after it, else any; 0 = any free port)
 *
 * The user directory is never ~/.node-red. The demo flow is copied in when the directory is
 * new or demo/flow.json changed since the last copy (an edited flows.json is kept as
 * flows.json.bak). It prints the editor, dashboard, built-in simulator (read from Node-RED's
 * log) and broker URLs. Ctrl-C / SIGTERM stop Node-RED, the simulator inside it and the broker.
 */
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const started = Date.now();
const userDir = path.resolve(process.env.EMS_DEMO_USERDIR || path.join(root, '.demo-userdir'));
const port = process.env.PORT === undefined || process.env.PORT === '' ? '1880' : process.env.PORT;
/** The port examples 03-05 and 10 use (their MQTT broker config node: localhost:1883). */
const EXAMPLES_MQTT_PORT = 1883;
const mqttPort =
  process.env.EMS_MQTT_PORT === undefined || process.env.EMS_MQTT_PORT === ''
    ? String(EXAMPLES_MQTT_PORT)
    : process.env.EMS_MQTT_PORT;
/** How long the ready banner waits for the built-in simulator's log line after the flows started. */
const SIM_LINE_WAIT_MS = 3000;

function die(text) {
  console.error(`start-demo: ${text}`);
  process.exit(1);
}

if (!/^\d{1,5}$/.test(port) || Number(port) > 65535)
  die(`PORT must be a port number (0 = any free port); got ${JSON.stringify(port)}`);
if (!/^\d{1,5}$/.test(mqttPort) || Number(mqttPort) > 65535)
  die(`EMS_MQTT_PORT must be a port number (0 = any free port); got ${JSON.stringify(mqttPort)}`);
if (userDir === path.join(os.homedir(), '.node-red')) die('refusing to use ~/.node-red as the demo user directory');

let redJs;
try {
  redJs = require.resolve('node-red/red.js', { paths: [root] });
} catch {
  die('node-red is not installed: run `npm install` first');
}

if (!fs.existsSync(path.join(root, 'dist', 'nodes', 'ems-partner-config.js'))) {
  console.log('start-demo: dist/ is missing, building once (npm run build)...');
  const build = spawnSync('npm', ['run', 'build'], {
    cwd: root,
    stdio: 'inherit',
    shell: process.platform === 'win32',
  });
  if (build.status !== 0) die('the build failed');
}

/** Prepares the user directory and copies the demo flow in when it is new or changed. */
function prepareUserDir() {
  fs.mkdirSync(userDir, { recursive: true });
  const pkg = path.join(userDir, 'package.json');
  if (!fs.existsSync(pkg)) {
    fs.writeFileSync(
      pkg,
      JSON.stringify(
        { name: 'ems-partner-demo-userdir', description: 'Node-RED user directory of npm start', private: true },
        null,
        2,
      ) + '\n',
    );
  }
  const sha = (b) => crypto.createHash('sha256').update(b).digest('hex');
  const demo = fs.readFileSync(path.join(root, 'demo', 'flow.json'));
  const flows = path.join(userDir, 'flows.json');
  const mark = path.join(userDir, '.demo-flow.sha256');
  const copied = fs.existsSync(mark) ? fs.readFileSync(mark, 'utf8').trim() : '';
  if (fs.existsSync(flows) && copied === sha(demo)) return;
  // The shipped demo changed (or this directory is new): keep the flows the user edited.
  if (fs.existsSync(flows) && sha(fs.readFileSync(flows)) !== copied) {
    fs.copyFileSync(flows, `${flows}.bak`);
    console.log(`start-demo: the demo flow changed; your edited flows are kept in ${path.relative(root, flows)}.bak`);
  }
  fs.writeFileSync(flows, demo);
  fs.writeFileSync(mark, sha(demo) + '\n');
}

/** Listens on 127.0.0.1:`p`; resolves false when the port is taken (or not allowed). */
function listenOn(server, p) {
  return new Promise((resolve, reject) => {
    const onError = (err) => {
      server.off('listening', onListening);
      if (err.code === 'EADDRINUSE' || err.code === 'EACCES') resolve(false);
      else reject(err);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve(true);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(p, '127.0.0.1');
  });
}

/**
 * The MQTT broker of the examples (aedes, a development dependency), on 127.0.0.1 only: it
 * has no authentication. Resolves with { port, wanted, close() }.
 */
async function startBroker() {
  let Aedes;
  try {
    ({ Aedes } = await import('aedes'));
  } catch (err) {
    die(`the MQTT broker (aedes) could not be loaded: run \`npm install\` first (${err.message})`);
  }
  const broker = await Aedes.createBroker();
  const sockets = new Set();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined); // a client that goes away must not stop the demo
    broker.handle(socket);
  });
  broker.on('clientError', () => undefined);
  broker.on('connectionError', () => undefined);
  const wanted = Number(mqttPort);
  const tries = wanted === 0 ? [0] : [...Array.from({ length: 11 }, (_, i) => wanted + i).filter((p) => p <= 65535), 0];
  let ok = false;
  for (const p of tries) {
    if ((ok = await listenOn(server, p))) break;
  }
  if (!ok) die('the MQTT broker found no free port on 127.0.0.1');
  server.on('error', (err) => console.error(`start-demo: MQTT broker: ${err.message}`));
  let closing;
  return {
    port: server.address().port,
    wanted,
    close() {
      closing ??= new Promise((resolve) => {
        const timer = setTimeout(resolve, 2000); // never hold Ctrl-C up for long
        for (const s of sockets) s.destroy();
        broker.close(() =>
          server.close(() => {
            clearTimeout(timer);
            resolve();
          }),
        );
      });
      return closing;
    },
  };
}

/** The broker line of the banner and, when examples 03-05 and 10 as shipped do not reach it, what to change. */
function brokerLines(mqtt) {
  const lines = [`  MQTT broker: mqtt://127.0.0.1:${mqtt.port} (for examples 03-05 and 10)`];
  if (mqtt.port === EXAMPLES_MQTT_PORT) return lines;
  const node = 'their MQTT broker config node ("Local MQTT broker (example 0x)")';
  if (mqtt.wanted === EXAMPLES_MQTT_PORT) {
    lines.push(
      `  Port ${EXAMPLES_MQTT_PORT} is in use (your own broker?), and examples 03-05 and 10 connect to localhost:${EXAMPLES_MQTT_PORT}.`,
      `  To use this broker instead, set Port to ${mqtt.port} in ${node}.`,
    );
  } else {
    lines.push(
      `  Examples 03-05 and 10 connect to localhost:${EXAMPLES_MQTT_PORT}: set Port to ${mqtt.port} in ${node}.`,
    );
  }
  return lines;
}

async function main() {
  prepareUserDir();
  const mqtt = await startBroker();
  console.log(
    `start-demo: MQTT broker listening on mqtt://127.0.0.1:${mqtt.port}` +
      (mqtt.wanted !== 0 && mqtt.port !== mqtt.wanted ? ` (port ${mqtt.wanted} is in use)` : ''),
  );

  const child = spawn(
    process.execPath,
    [redJs, '--userDir', userDir, '--settings', path.join(root, 'demo', 'settings.js'), '--port', port],
    {
      cwd: root,
      env: process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );

  let listen;
  let flowsStarted = false;
  let simUrl;
  let ready = false;
  let simWait;

  function banner() {
    if (ready) return;
    ready = true;
    clearTimeout(simWait);
    const secs = ((Date.now() - started) / 1000).toFixed(1);
    process.stdout.write(
      [
        '',
        `EMS partner demo ready in ${secs} s (user directory ${path.relative(root, userDir) || userDir})`,
        `  Editor:    ${listen}/`,
        `  Dashboard: ${listen}/dashboard`,
        ...(simUrl ? [`  Simulator: ${simUrl}`] : []),
        ...brokerLines(mqtt),
        'Press Ctrl-C to stop.',
        '',
      ].join('\n'),
    );
  }

  function onLine(line, stream) {
    stream.write(line + '\n');
    const match = /Server now running at (https?:\/\/\S+?)\/?$/.exec(line);
    if (match) listen = match[1];
    if (/\bStarted flows\b/.test(line)) flowsStarted = true;
    const sim = /\[ems-partner\] built-in simulator at (https?:\/\/[^\s/]+)/.exec(line);
    if (sim && !simUrl) {
      simUrl = sim[1];
      // Started later (no flow used it at first): print it on its own.
      if (ready) process.stdout.write(`  Simulator: ${simUrl}\n`);
    }
    if (ready || !listen || !flowsStarted) return;
    // The built-in simulator starts as the flows start: wait a moment for its URL.
    if (simUrl) banner();
    else simWait ??= setTimeout(banner, SIM_LINE_WAIT_MS);
  }

  function lines(stream, out) {
    let buf = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => {
      buf += chunk;
      let newline;
      while ((newline = buf.indexOf('\n')) >= 0) {
        onLine(buf.slice(0, newline).replace(/\r$/, ''), out);
        buf = buf.slice(newline + 1);
      }
    });
    stream.on('end', () => {
      if (buf) onLine(buf, out);
    });
  }
  lines(child.stdout, process.stdout);
  lines(child.stderr, process.stderr);

  let stopping = false;
  function stop() {
    if (stopping) return;
    stopping = true;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
    }
  }
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(s, stop);

  child.on('exit', async (code, signal) => {
    clearTimeout(simWait);
    await mqtt.close();
    if (!ready && !stopping) {
      console.error(
        `start-demo: Node-RED exited before it was ready (${signal || `code ${code}`}).` +
          (port !== '0' ? ` Is port ${port} in use? Try PORT=${Number(port) + 1} npm start.` : ''),
      );
      process.exit(1);
    }
    if (stopping) console.log('start-demo: stopped Node-RED and the MQTT broker');
    process.exit(stopping ? 0 : (code ?? 1));
  });
}

main().catch((err) => die(err && err.stack ? err.stack : String(err)));
