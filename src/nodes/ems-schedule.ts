// The Node-RED entry (package.json "node-red".nodes); the node lives in schedule/.
export = require('./schedule') as typeof import('./schedule');
