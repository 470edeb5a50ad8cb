'use strict';
// A real relay from dist/ on an ephemeral loopback port with a temp SVC_HOME, for the HTTP benches.
const { dist, tempDir } = require('./_lib');
const { createRelay } = dist('apps/relay/src/relay.js');
const { loadConfig } = dist('apps/relay/src/common/config/config.js');

(async () => {
  const home = tempDir('svc-bench-relay-');
  const config = loadConfig({ SVC_HOME: home, RELAY_HOST: '127.0.0.1', RELAY_PORT: '0', RELAY_LOG_LEVEL: 'ERROR' });
  const relay = await createRelay({ config });
  process.on('message', async (msg) => {
    if (msg && msg.cpu) return process.send({ cpu: process.cpuUsage() });
    if (msg && msg.stop) {
      await relay.close('bench done');
      require('node:fs').rmSync(home, { recursive: true, force: true });
      process.exit(0);
    }
  });
  process.send({ ready: true, url: relay.url });
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
