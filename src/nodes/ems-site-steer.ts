// The Node-RED entry (package.json "node-red".nodes); the node lives in site-steer/.
export = require('./site-steer') as typeof import('./site-steer');
