import * as fs from 'node:fs';
import * as path from 'node:path';
import { replayReport } from '../../apps/relay/src/cli/events';
import { resolveLogSource } from '../../apps/relay/src/cli/log-dir';
import { ManualClock } from '../../apps/relay/src/common/loop/clock';
import { svc } from '../support/cli';
import { Phone, startRelay, tempHome, type TestRelay } from '../support/harness';
import { call } from '../support/http';

/**
 * Built to run for a year: a home written by an earlier build (test/fixtures/golden/<version>-<commit>, made by
 * `node scripts/golden-home.js <that build> <dir>` and never edited since) starts, verifies and replays under
 * this one to the state that build replayed it to (expected.json), keeps its phone's session, its sealed
 * content, its recording and its trusted-device renewal. A new event field, a read-model schema bump or a
 * migration of files on disk that would strand an operator's home fails here first.
 */
const GOLDEN = path.join(__dirname, '..', 'fixtures', 'golden');
const homes = fs.readdirSync(GOLDEN).filter((d) => fs.existsSync(path.join(GOLDEN, d, 'expected.json')));

type Meta = { at: string; phone_a: { device_id: string; session_token: string; refresh_token: string | null }; revoked_prefix: string };

/** A working copy: a golden home is read-only, the relay writes into its copy. */
function copyOf(name: string): string {
  const home = tempHome();
  fs.cpSync(path.join(GOLDEN, name, 'home'), home, { recursive: true });
  return home;
}

describe.each(homes)('golden home %s', (name) => {
  const dir = path.join(GOLDEN, name);
  const meta = JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8')) as Meta;
  const expected = JSON.parse(fs.readFileSync(path.join(dir, 'expected.json'), 'utf8')) as Record<string, unknown>;

  it('verifies, and replays to the state its own build replayed it to', async () => {
    const home = copyOf(name);
    const verified = await svc(['relay', 'events', 'verify', '--json'], { SVC_HOME: home });
    expect(verified.code).toBe(0);
    const source = resolveLogSource({ SVC_HOME: home }, undefined);
    const now = await replayReport(source, new Date(meta.at));
    await source.close();
    for (const key of ['events', 'lastSeq', 'lastHash', 'countsByType', 'sessions', 'sessionsPastExpiry', 'pairingCodes', 'rateLimitBlocks'])
      expect([key, (now as Record<string, unknown>)[key]]).toEqual([key, expected[key]]);
  });

  describe('started by this build', () => {
    let relay: TestRelay;
    beforeAll(async () => {
      relay = await startRelay({ home: copyOf(name), clock: new ManualClock(meta.at), env: { PHONE_ENABLED: '1', RELAY_TERMINAL_RECORDING: '1' } });
    });
    afterAll(() => relay?.close());

    it('its phone reconnects with the session token it held; the revoked one stays out', async () => {
      const a = await Phone.connect(relay.url);
      expect((await a.auth({ session_token: meta.phone_a.session_token, device_id: meta.phone_a.device_id })).type).toBe('auth.ok');
      a.close();
      const sessions = (await call(relay, 'GET', '/console/api/sessions')).body.sessions as Array<{ token_prefix: string }>;
      expect(sessions.map((s) => s.token_prefix)).toEqual([meta.phone_a.session_token.slice(0, 8)]);
      expect(sessions.map((s) => s.token_prefix)).not.toContain(meta.revoked_prefix);
    });

    it('its sealed Thread content still opens, and its recording plays (sealed now under its device key)', async () => {
      const threads = await call(relay, 'GET', '/console/api/threads/golden');
      expect(JSON.stringify(threads.body)).toContain('golden thread message');
      const list = (await call(relay, 'GET', '/console/api/terminal/recordings')).body.recordings as Array<{ recording_id: string }>;
      expect(list).toHaveLength(1);
      const played = await fetch(`${relay.url}/console/api/terminal/recordings/${list[0].recording_id}`, { headers: relay.op });
      expect(played.status).toBe(200);
      expect(await played.text()).toContain('golden-42');
      const cast = fs.readdirSync(path.join(relay.home, 'relay', 'recordings')).find((f) => f.endsWith('.cast'))!;
      expect(fs.readFileSync(path.join(relay.home, 'relay', 'recordings', cast), 'utf8')).not.toContain('golden-42');
    });

    it('its trusted device renews once its session ended, with the refresh token it was given', async () => {
      if (meta.phone_a.refresh_token === null) return;
      relay.clock.advanceSeconds(8 * 86_400);
      await relay.sweep();
      const a = await Phone.connect(relay.url);
      const ok = await a.auth({
        session_token: meta.phone_a.session_token,
        refresh_token: meta.phone_a.refresh_token,
        device_id: meta.phone_a.device_id,
      });
      expect(ok.type).toBe('auth.ok');
      expect(ok.payload.session_token).not.toBe(meta.phone_a.session_token);
      a.close();
      expect((await svc(['relay', 'events', 'verify'], { SVC_HOME: relay.home })).code).toBe(0);
    });
  });
});
