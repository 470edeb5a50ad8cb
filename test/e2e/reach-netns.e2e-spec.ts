import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import pino from 'pino';
import { ManualClock } from '../../apps/relay/src/common/loop/clock';
import { ReachBroker } from '../../apps/relay/src/reach/broker';
import { newId, newToken, tokenSha256 } from '../../apps/relay/src/reach/protocol';
import { startRelay, tempHome, type TestRelay } from '../support/harness';
import { call } from '../support/http';
import { ROOT } from '../support/dist';

/**
 * Reach across a network the test makes itself: a phone in its own network namespace, joined to this one
 * by a veth pair, reaches the broker's address and nothing else; the relay's Secure Link listens on this
 * side's loopback only. The phone pairs anyway, through the broker. Needs root and iproute2 (CI runs as
 * root; the test says why when it cannot make the namespace).
 */
const NS = `svc-phone-${process.pid}`;
const net = `10.${200 + (process.pid % 50)}.${process.pid % 250}`;
const HOST_IP = `${net}.1`;
const PHONE_IP = `${net}.2`;

function makeNamespace(): string | null {
  const run = (args: string[], ns = false) => execFileSync(ns ? 'ip' : 'ip', ns ? ['netns', 'exec', NS, 'ip', ...args] : args, { stdio: 'pipe' });
  try {
    run(['netns', 'add', NS]);
    run(['link', 'add', `${NS.slice(0, 9)}h`, 'type', 'veth', 'peer', 'name', `${NS.slice(0, 9)}p`]);
    run(['link', 'set', `${NS.slice(0, 9)}p`, 'netns', NS]);
    run(['addr', 'add', `${HOST_IP}/24`, 'dev', `${NS.slice(0, 9)}h`]);
    run(['link', 'set', `${NS.slice(0, 9)}h`, 'up']);
    run(['addr', 'add', `${PHONE_IP}/24`, 'dev', `${NS.slice(0, 9)}p`], true);
    run(['link', 'set', `${NS.slice(0, 9)}p`, 'up'], true);
    run(['link', 'set', 'lo', 'up'], true);
    return null;
  } catch (err) {
    return (err as { stderr?: Buffer }).stderr?.toString().trim() || (err as Error).message;
  }
}

const why = makeNamespace();
const maybe = why === null ? describe : describe.skip;
if (why !== null) console.warn(`reach-netns: no network namespace here (${why}); run as root with iproute2`);

maybe('Reach across a network namespace: the phone reaches only the broker', () => {
  const dir = tempHome();
  const hostId = newId();
  const hostToken = newToken();
  let broker: ReachBroker;
  let relay: TestRelay;
  const cert = path.join(dir, 'broker-cert.pem');
  const key = path.join(dir, 'broker-key.pem');

  beforeAll(async () => {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/CN=reach test',
        '-addext',
        `subjectAltName=IP:${HOST_IP}`,
        '-keyout',
        key,
        '-out',
        cert,
      ],
      { stdio: 'ignore' },
    );
    fs.writeFileSync(path.join(dir, 'creds.json'), JSON.stringify({ hosts: { [hostId]: { host_token_sha256: tokenSha256(hostToken) } } }));
    broker = new ReachBroker({
      credentialsFile: path.join(dir, 'creds.json'),
      listen: HOST_IP,
      port: 0,
      tls: { cert, key },
      logger: pino({ level: 'silent' }),
    });
    await broker.start();
    const home = tempHome();
    fs.mkdirSync(path.join(home, 'relay', 'secure-link'), { recursive: true });
    fs.writeFileSync(path.join(home, 'relay', 'secure-link', 'host-id'), `${hostId}\n`);
    relay = await startRelay({
      home,
      clock: new ManualClock(new Date().toISOString()),
      env: {
        RELAY_SECURE_LINK_ENABLED: '1',
        RELAY_SECURE_LINK_HOST: '127.0.0.1',
        RELAY_SECURE_LINK_PORT: '0',
        RELAY_EXPERIMENTAL_REACH_ENABLED: '1',
        RELAY_SECURE_LINK_BROKER_URL: `wss://${HOST_IP}:${broker.port}`,
        RELAY_SECURE_LINK_BROKER_HOST_TOKEN: hostToken,
        RELAY_SECURE_LINK_BROKER_CA_FILE: cert,
      },
      reachBackoff: { baseMs: 50, maxMs: 200 },
    });
    for (let i = 0; i < 200 && (await call(relay, 'GET', '/health')).body.secure_link.reach.state !== 'connected'; i++)
      await new Promise((r) => setTimeout(r, 25));
  });
  afterAll(async () => {
    await relay?.close();
    await broker?.close();
    spawnSync('ip', ['netns', 'del', NS]);
    spawnSync('ip', ['link', 'del', `${NS.slice(0, 9)}h`]);
  });

  it('the direct route fails from the phone’s network; the Reach route pairs it, pinned end to end', async () => {
    expect((await call(relay, 'GET', '/health')).body.secure_link.reach.state).toBe('connected');
    const qr = JSON.parse((await call(relay, 'POST', '/pairing/mint', {})).body.qr_payload);
    const cand = qr.endpoints.find((e: { role: string }) => e.role === 'outbound_broker');
    const config = { broker: cand.broker, proxy: cand.proxy, code: qr.relay.code, brokerCa: cert };
    // Asynchronously: the broker and the relay answer from this very process.
    const child = spawn('ip', ['netns', 'exec', NS, process.execPath, path.join(ROOT, 'test', 'fixtures', 'reach', 'netns-phone.mjs')], {
      env: { ...process.env, PHONE_CONFIG: JSON.stringify(config) },
    });
    const r = { stdout: '', stderr: '', status: null as number | null };
    child.stdout.on('data', (d) => (r.stdout += d));
    child.stderr.on('data', (d) => (r.stderr += d));
    r.status = await new Promise<number | null>((resolve) => {
      const t = setTimeout(() => child.kill(), 30_000);
      child.on('exit', (code) => (clearTimeout(t), resolve(code)));
    });
    const steps = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(steps[0]).toMatchObject({ step: 'direct', reached: false });
    expect(steps[1]).toEqual({ step: 'broker', matched: true, code: null });
    expect(steps[2]).toMatchObject({ step: 'auth', type: 'auth.ok', route_credential: true });
    expect(r.status).toBe(0);
  });
});
