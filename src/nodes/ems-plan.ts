// The Node-RED entry (package.json "node-red".nodes); the node lives in plan/.
export = require('./plan') as typeof import('./plan');
