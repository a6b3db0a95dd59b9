// The Node-RED entry (package.json "node-red".nodes); the node lives in request/.
export = require('./request') as typeof import('./request');
