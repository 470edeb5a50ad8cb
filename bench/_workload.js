'use strict';
// The relay's own command workload for the event benches: the command loop on a store, and one
// pair/revoke cycle (register a code, pair with it, revoke the session: 3 commands, 3+ events).
const { dist } = require('./_lib');

const { CommandLoop } = dist('apps/relay/src/common/loop/command-loop.js');
const { newSessionToken, tokenPrefix, secureRandomBytes } = dist('apps/relay/src/common/auth/secrets.js');
const { SystemClock } = dist('apps/relay/src/common/loop/clock.js');
const domain = dist('libs/domain/src/index.js');

const silent = { info() {}, warn() {}, error() {}, debug() {}, fatal() {} };
const terms = domain.pairingTerms({});
const device = { deviceId: '', deviceName: 'bench', deviceModel: null, devicePlatform: null };

/** The command loop on `store` (a StoreFactory), quiet, with a snapshot every `snapshotEvery` events. */
function openLoop(store, secrets, snapshotEvery = 50_000) {
  return CommandLoop.open({
    store,
    secrets,
    clock: new SystemClock(),
    logger: silent,
    snapshotEvery,
    onFatal: (e) => {
      throw e;
    },
  });
}

/** One pair/revoke cycle through the loop; resolves to the three commands' durable events. */
async function pairRevokeCycle(log, secrets) {
  const codeDigest = secrets.digest(domain.codeFromBytes(secureRandomBytes(16)));
  const a = await log.run('operator', (m, now) => domain.registerCode(m, { codeDigest, source: 'register', terms }, now));
  const token = newSessionToken();
  const prefix = tokenPrefix(token);
  const b = await log.run('public:127.0.0.1', (m, now) =>
    domain.consumeCode(m, { codeDigest, tokenDigest: secrets.digest(token), tokenPrefix: prefix, device, ip: '127.0.0.1' }, now),
  );
  const caller = { kind: 'device', tokenPrefix: prefix, deviceId: '', deviceName: 'bench' };
  const c = await log.run(`device:${prefix}`, (m, now) => domain.revokeSession(m, prefix, caller, now));
  return [a, b, c];
}

module.exports = { openLoop, pairRevokeCycle };
