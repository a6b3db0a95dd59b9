// The Node-RED entry (package.json "node-red".nodes); the node lives in config/.
export = require('./config') as typeof import('./config');
