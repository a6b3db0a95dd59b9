// The Node-RED entry (package.json "node-red".nodes); the node lives in device-read/.
export = require('./device-read') as typeof import('./device-read');
