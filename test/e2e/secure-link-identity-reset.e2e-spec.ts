import * as fs from 'node:fs';
import * as path from 'node:path';
import pino from 'pino';
import { ManualClock } from '../../apps/relay/src/common/loop/clock';
import { ReachBroker } from '../../apps/relay/src/reach/broker';
import { newId, newToken, tokenSha256 } from '../../apps/relay/src/reach/protocol';
import { startRelay, tempHome, type TestRelay } from '../support/harness';
import { call } from '../support/http';
import { svc } from '../support/cli';

/**
 * Issue 41 item 8: the documented identity reset must not cost the relay its Reach host id (the broker
 * knows the relay only by it). Each case resets the identity by doing exactly what the relay's own
 * message says, restarts, and expects Reach back with the host id the broker's credentials file names.
 */

type Reach = { state: string; host_id: string | null; last_error: string | null };

const health = async (relay: TestRelay) => (await call(relay, 'GET', '/health')).body;

/** Polls /health until Reach has settled either way (connected, or refused with a reason): a failure is then read, not timed out. */
async function reachSettled(relay: TestRelay): Promise<Reach> {
  for (let i = 0; i < 1500; i++) {
    const r = (await health(relay)).secure_link.reach as Reach;
    if (r.state === 'connected' || r.last_error) return r;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error('Reach neither connected nor failed');
}

/** What the relay's message says to do: `... remove <path>[ and <path>] to ...`, each path removed as a user would (`rm -r`). */
function resetAsTold(reason: string): string[] {
  const told = /remove (.+?) to /.exec(reason);
  if (!told) throw new Error(`the message names nothing to remove: ${reason}`);
  const paths = told[1].split(' and ');
  for (const p of paths) fs.rmSync(p, { recursive: true });
  return paths;
}

// Each case starts a relay three times and makes two identities: generous bounds for a busy machine.
describe('Resetting the Secure Link identity as the relay says keeps the Reach host id (issue 41)', () => {
  let hostToken = newToken();
  let broker: ReachBroker;
  let credentials: string;
  const env = (host: string, brokerPort: number) => ({
    RELAY_SECURE_LINK_ENABLED: '1',
    RELAY_SECURE_LINK_HOST: host,
    RELAY_SECURE_LINK_PORT: '0',
    RELAY_EXPERIMENTAL_REACH_ENABLED: '1',
    RELAY_SECURE_LINK_BROKER_URL: `ws://127.0.0.1:${brokerPort}`,
    RELAY_SECURE_LINK_BROKER_HOST_TOKEN: hostToken,
  });
  const start = (home: string, host: string) =>
    startRelay({ home, env: env(host, broker.port), reachBackoff: { baseMs: 50, maxMs: 200 }, clock: new ManualClock(new Date().toISOString()) });

  /** The broker, knowing exactly one host (`hostId`, the digest of `hostToken`), or the entry `svc reach host-entry` printed. */
  async function brokerFor(hostId: string, entry?: unknown): Promise<void> {
    credentials = path.join(tempHome(), 'credentials.json');
    fs.writeFileSync(credentials, JSON.stringify(entry ?? { hosts: { [hostId]: { host_token_sha256: tokenSha256(hostToken) } } }));
    broker = new ReachBroker({ credentialsFile: credentials, listen: '127.0.0.1', port: 0, logger: pino({ level: 'silent' }) });
    await broker.start();
  }
  afterEach(async () => broker?.close());

  /** Runs on 127.0.0.1, then is told its identity does not cover 127.0.0.2, resets it as told, and comes back. */
  async function resetAndReturn(home: string, hostId: string): Promise<{ removed: string[] }> {
    let relay = await start(home, '127.0.0.1');
    try {
      expect(await reachSettled(relay)).toMatchObject({ state: 'connected', host_id: hostId });
      const oldPin = (await health(relay)).secure_link.identity.pin_sha256;
      await relay.close();
      relay = await start(home, '127.0.0.2');
      const refused = (await health(relay)).secure_link;
      expect(refused).toMatchObject({ status: 'unavailable', last_error: expect.stringContaining('does not cover 127.0.0.2') });
      await relay.close();
      const removed = resetAsTold(refused.last_error);
      relay = await start(home, '127.0.0.2');
      const sl = (await health(relay)).secure_link;
      expect(sl).toMatchObject({ status: 'available', identity: { subject_alt_names: ['IP:127.0.0.2'] } });
      expect(sl.identity.pin_sha256).not.toBe(oldPin);
      expect(await reachSettled(relay)).toMatchObject({ state: 'connected', host_id: hostId, last_error: null });
      return { removed };
    } finally {
      await relay.close();
    }
  }

  it('a home made before the host id moved (host id beside the identity): it stays where it was, and the reset leaves it alone', async () => {
    const home = tempHome();
    const hostId = newId();
    const legacy = path.join(home, 'relay', 'secure-link', 'host-id');
    fs.mkdirSync(path.dirname(legacy), { recursive: true, mode: 0o700 });
    fs.writeFileSync(legacy, `${hostId}\n`, { mode: 0o600 });
    await brokerFor(hostId);
    const { removed } = await resetAndReturn(home, hostId);
    expect(removed).toEqual(['cert.pem', 'key.pem'].map((f) => path.join(home, 'relay', 'secure-link', f)));
    expect(fs.readFileSync(legacy, 'utf8').trim()).toBe(hostId);
    expect(fs.existsSync(path.join(home, 'relay-secure-link', 'host-id'))).toBe(false);
  }, 60_000);

  it('a new home: `svc reach host-entry` makes the host id apart from the identity (<svc_home>/relay-secure-link/host-id, the spec default)', async () => {
    const home = tempHome();
    const entry = await svc(['reach', 'host-entry', '--json'], { SVC_HOME: home });
    expect(entry.code).toBe(0);
    const printed = JSON.parse(entry.stdout) as { host_id: string; host_token: string; credentials_entry: unknown };
    const hostId = printed.host_id;
    hostToken = printed.host_token;
    await brokerFor(hostId, printed.credentials_entry);
    await resetAndReturn(home, hostId);
    const file = path.join(home, 'relay-secure-link', 'host-id');
    expect(fs.readFileSync(file, 'utf8').trim()).toBe(hostId);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(fs.existsSync(path.join(home, 'relay', 'secure-link', 'host-id'))).toBe(false);
  }, 60_000);
});
