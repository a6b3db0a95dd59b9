// The Node-RED entry (package.json "node-red".nodes); the node lives in time-series/.
export = require('./time-series') as typeof import('./time-series');
