'use strict';
/**
 * Writes a golden home: a relay home (event log, snapshot, secrets, data keys, a recording) made by a given
 * build of this project, driven through its real routes and sockets with a manual clock, and the state that
 * build replays from it. Later versions must start on a copy of it, verify it and replay it to the same state
 * (test/replay/golden-homes.spec.ts). A golden home is never edited once committed: a new one is added instead.
 *
 *   node scripts/golden-home.js <built checkout> <out dir>     # e.g. a worktree of a release tag, after its build
 *
 * The home is made in <out dir>/home; <out dir>/expected.json holds the build's own `replayReport` of it at
 * <out dir>/meta.json's `at`, meta.json the credentials a test reconnects with (this is a fixture: its
 * secrets protect nothing), and <out dir>/checkpoint.json a checkpoint of its last record signed by its own key.
 * The same steps at the same manual clock give the same state; ids, tokens and keys are random, so the bytes differ.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const [checkout, outDir] = process.argv.slice(2).map((p) => p && path.resolve(p));
if (!checkout || !outDir) {
  console.error('usage: node scripts/golden-home.js <built checkout> <out dir>');
  process.exit(2);
}
const dist = (p) => require(path.join(checkout, 'dist', p));
const { createRelay } = dist('apps/relay/src/relay.js');
const { loadConfig } = dist('apps/relay/src/common/config/config.js');
const { ManualClock } = dist('apps/relay/src/common/loop/clock.js');
const { replayReport } = dist('apps/relay/src/cli/events.js');
const { resolveLogSource } = dist('apps/relay/src/cli/log-dir.js');
const WebSocket = require(path.join(checkout, 'node_modules/ws'));
const pino = require(path.join(checkout, 'node_modules/pino'));

const START = '2026-11-27T12:00:00.000Z';

function connect(url) {
  const ws = new WebSocket(url.replace(/^http/, 'ws') + '/ws');
  const frames = [];
  const waiters = [];
  ws.on('message', (d) => {
    const f = JSON.parse(d.toString());
    const i = waiters.findIndex((w) => w.match(f));
    if (i >= 0) waiters.splice(i, 1)[0].resolve(f);
    else frames.push(f);
  });
  const next = (match) =>
    new Promise((resolve, reject) => {
      const seen = frames.findIndex(match);
      if (seen >= 0) return resolve(frames.splice(seen, 1)[0]);
      const t = setTimeout(() => reject(new Error('no frame in 10 s')), 10_000);
      waiters.push({ match, resolve: (f) => (clearTimeout(t), resolve(f)) });
    });
  const send = (channel, type, payload = {}, id) => ws.send(JSON.stringify({ channel, type, id, payload }));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, next, send }));
    ws.once('error', reject);
  });
}

async function http(relay, method, route, body, headers = {}) {
  const res = await fetch(relay.url + route, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function pair(relay, code, deviceId, terms) {
  const r = await http(relay, 'POST', '/pairing/register', { code, ...terms });
  if (r.status !== 200) throw new Error(`register ${r.status} ${JSON.stringify(r.body)}`);
  const p = await connect(relay.url);
  p.send('system', 'auth', { pairing_code: code, device_id: deviceId, device_name: `Golden ${deviceId}` }, 'a');
  const ok = await p.next((f) => f.channel === 'system' && f.type.startsWith('auth.'));
  if (ok.type !== 'auth.ok') throw new Error(`auth ${JSON.stringify(ok)}`);
  return { ...p, token: ok.payload.session_token, refresh: ok.payload.refresh_token ?? null };
}

async function main() {
  const home = path.join(outDir, 'home');
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(home, { recursive: true });
  const clock = new ManualClock(START);
  const env = {
    SVC_HOME: home,
    HOME: home,
    RELAY_HOST: '127.0.0.1',
    RELAY_PORT: '0',
    RELAY_LOG_LEVEL: 'ERROR',
    PHONE_ENABLED: '1',
    RELAY_TERMINAL_RECORDING: '1',
    RELAY_TERMINAL_SHELL: '/bin/sh',
  };
  const config = { ...loadConfig(env), sweepIntervalMs: 3_600_000 };
  const relay = await createRelay({ config, clock, logDestination: pino.destination('/dev/null') });

  // Two phones; A keeps its session, B is revoked by A.
  const a = await pair(relay, 'GOLDA1', 'golden-a', { ttl_seconds: 7 * 86_400 });
  const b = await pair(relay, 'GOLDB1', 'golden-b', { ttl_seconds: 86_400, grants: { terminal: '1d', bridge: false } });
  // Personal content: a notification A saw, a Thread message queued for no phone then delivered to A, A's reply.
  a.send('notifications', 'notification.posted', { package_name: 'com.example.bank', title: 'Code', text: 'golden 482913', posted_at: 1 });
  const posted = await http(relay, 'POST', '/phone/message', { chat_id: 'golden', text: 'golden thread message' });
  if (posted.status !== 200) throw new Error(`message ${posted.status}`);
  a.send('proactive', 'proactive.subscribe', {}, 's');
  await a.next((f) => f.type === 'proactive.backlog.complete');
  a.send('proactive', 'proactive.reply', { chat_id: 'golden', text: 'golden reply', message_id: 'golden-reply-1' }, 'r');
  await a.next((f) => f.type === 'proactive.reply.ack');
  // Device Control status, as the app nests it.
  a.send('bridge', 'bridge.status', {
    bridge: { master_enabled: true, device_control_supported: true },
    safety: { auto_disable_minutes: 30 },
    current_app: 'com.android.launcher3',
    battery: 80,
  });
  // A recorded shell.
  a.send('terminal', 'terminal.attach', { session_name: 'golden', cols: 80, rows: 24 }, 't');
  await a.next((f) => f.type === 'terminal.attached');
  a.send('terminal', 'terminal.input', { session_name: 'golden', data: 'echo golden-$((40+2))\n' });
  await a.next((f) => f.type === 'terminal.output' && String(f.payload.data).includes('golden-42'));
  a.send('terminal', 'terminal.kill', { session_name: 'golden' }, 'k');
  await a.next((f) => f.id === 'k');
  // A revokes B; a stranger's bad tokens get an address blocked.
  const revoked = await http(relay, 'DELETE', `/sessions/${b.token.slice(0, 8)}`, undefined, { authorization: `Bearer ${a.token}` });
  if (revoked.status !== 200) throw new Error(`revoke ${revoked.status}`);
  for (let i = 0; i < 5; i++)
    await http(relay, 'GET', '/sessions', undefined, { authorization: `Bearer ${'x'.repeat(43)}`, 'x-forwarded-for': '203.0.113.9' });
  // Time passes: an unused code expires, the sweep runs.
  await http(relay, 'POST', '/pairing/register', { code: 'GOLDC1' });
  clock.advanceSeconds(3600);
  await relay.sweep();
  a.ws.close();
  b.ws.close();
  await new Promise((r) => setTimeout(r, 200));
  await relay.close('golden home written');

  const at = new Date(clock.now().getTime() + 60_000);
  const source = resolveLogSource({ SVC_HOME: home }, undefined);
  const report = await replayReport(source, at);
  await source.close();
  delete report.dir;
  fs.writeFileSync(path.join(outDir, 'expected.json'), JSON.stringify(report, null, 2) + '\n');
  const { execFileSync } = require('node:child_process');
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['-C', checkout, 'rev-parse', 'HEAD']).toString().trim();
  } catch {
    /* a checkout without git */
  }
  const version = JSON.parse(fs.readFileSync(path.join(checkout, 'package.json'), 'utf8')).version;
  // A checkpoint signed by the home's own key (a build that has the command): later builds must still prove the log holds it.
  const cli = dist('apps/relay/src/cli/main.js');
  const quiet = { write: () => true, isTTY: false };
  const signed = await cli.main(['relay', 'events', 'checkpoint', '--out', path.join(outDir, 'checkpoint.json')], {
    stdout: quiet,
    stderr: quiet,
    env: { SVC_HOME: home, PATH: process.env.PATH },
  });
  if (signed !== 0) console.error(`this build signed no checkpoint (exit ${signed}); the home has none`);
  fs.writeFileSync(
    path.join(outDir, 'meta.json'),
    JSON.stringify(
      {
        written_by: { version, commit },
        start: START,
        at: at.toISOString(),
        phone_a: { device_id: 'golden-a', session_token: a.token, refresh_token: a.refresh },
        revoked_prefix: b.token.slice(0, 8),
        node: process.version,
        platform: `${os.platform()} ${os.arch()}`,
      },
      null,
      2,
    ) + '\n',
  );
  console.log(`golden home of ${version} (${commit.slice(0, 12)}) in ${outDir}: ${report.events} events, last seq ${report.lastSeq}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
