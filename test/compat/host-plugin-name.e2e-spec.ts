import * as fs from 'node:fs';
import * as path from 'node:path';
import { readEvents, tempHome } from '../support/harness';
import { call } from '../support/http';
import { startRelay } from './client-relay';

/**
 * The public plugin is named `hermes-relay` (plugin/plugin.yaml:1 in the reference), so an agent host running it
 * lists that name in a profile's `plugins.enabled`. The relay reads both names always (WIRE.md, "Spelling"),
 * and writes the public one when it enables itself under RELAY_CLIENT_SPELLING=hermes.
 */
describe('compat: the relay plugin as a real host names it', () => {
  it("reads hermes-relay in a profile's plugin lists, and enables itself by that name under the hermes spelling", async () => {
    const home = tempHome();
    fs.writeFileSync(path.join(home, 'config.yaml'), 'plugins:\n  enabled: [hermes-relay]\n');
    for (const [name, config] of [
      ['off', 'plugins:\n  disabled: [hermes-relay]\n'],
      ['fresh', 'model: small\n'],
    ]) {
      fs.mkdirSync(path.join(home, 'profiles', name), { recursive: true });
      fs.writeFileSync(path.join(home, 'profiles', name, 'config.yaml'), config);
    }
    const relay = await startRelay({ home });
    try {
      const states = (
        readEvents(home).find((e) => e.type === 'profile.catalog_changed')!.data.profiles as Array<{ name: string; relay: string }>
      ).map((p) => [p.name, p.relay]);
      expect(states).toEqual(
        expect.arrayContaining([
          ['default', 'enabled'],
          ['off', 'disabled'],
          ['fresh', 'absent'],
        ]),
      );
      const enabled = await call(relay, 'POST', '/relay/profiles/enable', { names: ['fresh', 'off'] });
      expect(enabled.status).toBe(200);
      expect(fs.readFileSync(path.join(home, 'profiles', 'fresh', 'config.yaml'), 'utf8')).toMatch(/hermes-relay/);
      const off = fs.readFileSync(path.join(home, 'profiles', 'off', 'config.yaml'), 'utf8');
      expect(off).toMatch(/enabled:[\s\S]*hermes-relay/);
      expect(off).not.toMatch(/disabled:[^\n]*hermes-relay/);
    } finally {
      await relay.close();
    }
  });
});
