import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfig } from '../../apps/relay/src/common/config/config';
import { ConfigError } from '../../apps/relay/src/common/config/config-env';
import { decodePairing } from '../../apps/relay/src/pairing/qr-payload';
import { dc, startSim } from '../support/bridge';
import { json, startRelay, tempHome, type TestRelay } from '../support/harness';
import { operatorFetch } from '../support/http';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

/**
 * RELAY_CLIENT_SPELLING (issue 22.1, WIRE.md "Spelling"): the relay writes the spec's `svc` names by
 * default and the public clients' `hermes` names when asked; it reads both always.
 */
jest.setTimeout(30_000);

async function writes(relay: TestRelay) {
  const mint = await json(await fetch(`${relay.url}/pairing/mint`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }));
  const file = path.join(fs.mkdtempSync(path.join('/tmp', 'spelling-')), 'shot.png');
  fs.writeFileSync(file, 'png bytes');
  const markers = await json(
    await fetch(`${relay.url}/media/markers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: `see MEDIA:${file}` }),
    }),
  );
  const sim = await startSim(relay);
  await dc(relay, sim.token!, 'POST', '/return_to_svc', {});
  const returned = [...sim.received].reverse().find((f) => f.type === 'bridge.command')!.payload.path;
  sim.stop();
  const health = await json(await fetch(`${relay.url}/health`));
  const info = await json(await fetch(`${relay.url}/relay/info`));
  return { mint, qr: JSON.parse(mint.qr_payload as string) as Record<string, unknown>, text: markers.text as string, returned, health, info };
}

describe('the spelling the relay writes', () => {
  it("default: the spec's svc names everywhere (scheme, QR version key, media marker, return path), and it says so", async () => {
    const relay = await startRelay();
    try {
      const w = await writes(relay);
      expect(w.mint.pairing_url).toMatch(/^svc-relay:\/\/pair\?payload=/);
      expect(w.qr).toHaveProperty('svc', 1);
      expect(w.qr).not.toHaveProperty('hermes');
      expect(w.text).toMatch(/^see MEDIA:svc-relay:\/\/[A-Za-z0-9_-]{22}$/);
      expect(w.returned).toBe('/return_to_svc');
      expect(w.health.client_spelling).toBe('svc');
      expect(w.info.client_spelling).toBe('svc');
      // Both spellings are read: a hermes invite decodes, a hermes marker is a token.
      expect(decodePairing(w.mint.pairing_url.replace('svc-relay://', 'hermes-relay://'))).toEqual(w.qr);
    } finally {
      await relay.close();
    }
  });

  it("RELAY_CLIENT_SPELLING=hermes: the public clients' names, read back in both", async () => {
    const relay = await startRelay({ env: { RELAY_CLIENT_SPELLING: 'hermes' } });
    try {
      const w = await writes(relay);
      expect(w.mint.pairing_url).toMatch(/^hermes-relay:\/\/pair\?payload=/);
      expect(w.qr).toHaveProperty('hermes', 1);
      expect(w.qr).not.toHaveProperty('svc');
      expect(w.text).toMatch(/^see MEDIA:hermes-relay:\/\/[A-Za-z0-9_-]{22}$/);
      expect(w.returned).toBe('/return_to_hermes');
      expect(w.health.client_spelling).toBe('hermes');
      expect(decodePairing(w.mint.pairing_url.replace('hermes-relay://', 'svc-relay://'))).toEqual(w.qr);
    } finally {
      await relay.close();
    }
  });

  it('any other value stops start-up with a clear error', () => {
    for (const bad of ['Hermes', 'both', 'svc ', '1']) {
      const env = { SVC_HOME: tempHome(), RELAY_CLIENT_SPELLING: bad };
      if (bad === 'svc ') {
        expect(loadConfig(env).clientSpelling).toBe('svc');
        continue;
      }
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(/RELAY_CLIENT_SPELLING must be "svc" .* or "hermes"/);
    }
  });
});
