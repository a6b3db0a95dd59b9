/**
 * Node-RED settings of the `npm start` demo. scripts/start-demo.js passes the user directory
 * (.demo-userdir/, git-ignored) and the port; HOST sets the interface (default 127.0.0.1).
 * This package is loaded from the project root through `nodesDir`; the dashboard is found in
 * the project's node_modules, which Node-RED scans next to its own.
 */
const path = require('node:path');

module.exports = {
  uiHost: process.env.HOST || '127.0.0.1',
  flowFile: 'flows.json',
  flowFilePretty: true,
  nodesDir: [path.resolve(__dirname, '..')],
  // The demo has no secrets; a real key typed into the editor is still encrypted with a
  // key Node-RED generates into .demo-userdir/.config.runtime.json.
  logging: { console: { level: 'info', metrics: false, audit: false } },
  diagnostics: { enabled: false, ui: false },
  telemetry: { enabled: false },
  externalModules: { autoInstall: false, palette: { allowInstall: true } },
  editorTheme: {
    tours: false,
    projects: { enabled: false },
    page: { title: 'EMS partner demo' },
    header: { title: 'EMS partner demo' },
  },
  functionExternalModules: false,
  exportGlobalContextKeys: false,
};
