'use strict';
/**
 * "Tuned axios", the baseline of the read and steering goals: axios configured as
 * src/client/transport.ts configures the package's instance: keep-alive agent with 60 s TCP
 * keep-alive and maxSockets = concurrency, baseURL, no redirects, no proxy, body limits both ways
 * (the config node's default maxBodyMB, protocol/limits.ts), the same default headers and
 * transitional options; responseType, validateStatus and decompress left at axios' defaults, as
 * the transport leaves them. What the transport adds on top (axios-retry's interceptors, the
 * limiter, the wall-clock deadline, the attempt hook, the response shape check) is the package's
 * own cost and is not in the baseline.
 */
const http = require('node:http');
const path = require('node:path');
const axios = require('axios');
const { DIST } = require('./common');

const MAX_BODY_BYTES = 10 * 1024 * 1024;

function tunedAxios(baseURL, concurrency = 6) {
  return axios.create({
    baseURL,
    httpAgent: new http.Agent({ keepAlive: true, keepAliveMsecs: 60_000, maxSockets: concurrency }),
    maxRedirects: 0,
    proxy: false,
    maxContentLength: MAX_BODY_BYTES,
    maxBodyLength: MAX_BODY_BYTES,
    headers: { accept: 'application/json', 'user-agent': '@ems-partner/node-red' },
    transitional: { clarifyTimeoutError: true, silentJSONParsing: true, forcedJSONParsing: true },
  });
}

/**
 * Tuned axios on the package's transport: the same instance with the adapter the package sends
 * through (undici, dist/client/http-pool.js) instead of axios' own http adapter; what a minimal
 * node "on the same transport" uses.
 */
function tunedAxiosUndici(baseURL, concurrency = 6) {
  const { createHttpPool } = require(path.join(DIST, 'client', 'http-pool.js'));
  const pool = createHttpPool({ adapter: 'undici', concurrency, rejectUnauthorized: true, timeoutMs: 10_000 });
  const ax = tunedAxios(baseURL, concurrency);
  ax.defaults.adapter = pool.adapter;
  return ax;
}

module.exports = { tunedAxios, tunedAxiosUndici, MAX_BODY_BYTES };
