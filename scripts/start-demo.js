#!/usr/bin/env node
/**
 * `npm start`: Node-RED (the development dependency) with this package, the FlowFuse
 * dashboard and the demo flow (demo/flow.json) on the built-in simulator.
 *
 *   PORT (default 1880, 0 = any free port), HOST (default 127.0.0.1)
 *   EMS_DEMO_USERDIR  user directory (default .demo-userdir/ in the project; tests use their own)
 *
 * The user directory is never ~/.node-red. The demo flow is copied in when the directory is
 * new or demo/flow.json changed since the last copy (an edited flows.json is kept as
 * flows.json.bak). Ctrl-C / SIGTERM stop Node-RED and the simulator inside it.
 */
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const started = Date.now();
const userDir = path.resolve(process.env.EMS_DEMO_USERDIR || path.join(root, '.demo-userdir'));
const port = process.env.PORT === undefined || process.env.PORT === '' ? '1880' : process.env.PORT;

function die(text) {
    console.error(`start-demo: ${text}`);
    process.exit(1);
}

if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) die(`PORT must be a port number (0 = any free port); got ${JSON.stringify(port)}`);
if (userDir === path.join(os.homedir(), '.node-red')) die('refusing to use ~/.node-red as the demo user directory');

let redJs;
try {
    redJs = require.resolve('node-red/red.js', { paths: [root] });
} catch {
    die('node-red is not installed: run `npm install` first');
}

if (!fs.existsSync(path.join(root, 'dist', 'nodes', 'ems-partner-config.js'))) {
    console.log('start-demo: dist/ is missing, building once (npm run build)...');
    const r = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
    if (r.status !== 0) die('the build failed');
}

/** Prepares the user directory and copies the demo flow in when it is new or changed. */
function prepareUserDir() {
    fs.mkdirSync(userDir, { recursive: true });
    const pkg = path.join(userDir, 'package.json');
    if (!fs.existsSync(pkg)) {
        fs.writeFileSync(pkg, JSON.stringify({ name: 'ems-partner-demo-userdir', description: 'Node-RED user directory of npm start', private: true }, null, 2) + '\n');
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

prepareUserDir();

const child = spawn(process.execPath, [redJs, '--userDir', userDir, '--settings', path.join(root, 'demo', 'settings.js'), '--port', port], {
    cwd: root,
    env: process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
});

let listen;
let flowsStarted = false;
let ready = false;

function onLine(line, stream) {
    stream.write(line + '\n');
    const m = /Server now running at (https?:\/\/\S+?)\/?$/.exec(line);
    if (m) listen = m[1];
    if (/\bStarted flows\b/.test(line)) flowsStarted = true;
    if (!ready && listen && flowsStarted) {
        ready = true;
        const secs = ((Date.now() - started) / 1000).toFixed(1);
        process.stdout.write([
            '',
            `EMS partner demo ready in ${secs} s (user directory ${path.relative(root, userDir) || userDir})`,
            `  Editor:    ${listen}/`,
            `  Dashboard: ${listen}/dashboard`,
            'Press Ctrl-C to stop.',
            '',
        ].join('\n'));
    }
}

function lines(stream, out) {
    let buf = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => {
        buf += chunk;
        let i;
        while ((i = buf.indexOf('\n')) >= 0) {
            onLine(buf.slice(0, i).replace(/\r$/, ''), out);
            buf = buf.slice(i + 1);
        }
    });
    stream.on('end', () => { if (buf) onLine(buf, out); });
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

child.on('exit', (code, signal) => {
    if (!ready && !stopping) {
        console.error(`start-demo: Node-RED exited before it was ready (${signal || `code ${code}`}).` +
            (port !== '0' ? ` Is port ${port} in use? Try PORT=${Number(port) + 1} npm start.` : ''));
        process.exit(1);
    }
    process.exit(stopping ? 0 : (code ?? 1));
});
