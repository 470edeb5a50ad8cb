// An agent's loop over MCP against the same loop over the HTTP routes (issue 40, item 8): screenshot, find,
// tap, wait, one step after another as an agent makes them, against the phone simulator in its own process
// (`svc phone-sim --mode app --screen 1080x2340`: the app's wire, full-size screenshots). Three subjects, the
// loops interleaved one by one (the order rotating) so a busier moment weighs on all alike:
//   - http:        the Device Control routes with the phone's bearer (fetch, keep-alive), as the host plugin calls them
//   - mcp:         the same steps as tools/call through the official SDK's Client over Streamable HTTP, on a relay
//                  with the default RELAY_BRIDGE_EVIDENCE=mcp (a tap asks the phone's /screen_hash before and after)
//   - mcp, no ev.: the same on a second relay with RELAY_BRIDGE_EVIDENCE=off: the difference is the evidence's cost
// Per step: the median ms of each subject, and the ratios mcp / http and mcp / mcp without evidence. The HTTP
// screenshot answers the phone's PNG as it is; the MCP one scales it to a long side of 2000 px as JPEG (what an
// agent can use): that step compares two different answers, and says so.
//
// STEPS is the loop: a step names its tool and arguments and its HTTP route and body (or `http: null` for an
// MCP-only tool, shown as "-"). Item 2's element tools are steps against the route nearest to what they do: the
// element tree against GET /screen, a tap by query (which reads /screen, then taps the node) against POST
// /tap_text, and a wait_for on text already on screen (one poll) against POST /find_nodes. They run on the
// simulator's default fixed screen (fake-phone.ts screenNodes), which no tap changes, so the query's one
// "Settings" button and the "Messages" title are there loop after loop (a tap on "Send" would be a
// destructive one, asked of the phone's user).
//
// Build first:  npm run build
// Run:          node bench/mcp-loop.js [--loops 30] [--log-dir /dev/shm]
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { Writable } = require('node:stream');
const { dist, median } = require('./_lib');

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const LOOPS = Number(arg('loops', 30));
const WARMUP = 3;

/** The loop an agent runs: look, find what to act on, act, let the screen settle. */
const STEPS = [
  { name: 'screenshot', mcp: ['android_screenshot', {}], http: ['GET', '/screenshot'] },
  { name: 'find', mcp: ['android_find_nodes', { text: 'Send' }], http: ['POST', '/find_nodes', { text: 'Send' }] },
  { name: 'tap', mcp: ['android_tap', { x: 540, y: 500, coordinates: 'phone' }], http: ['POST', '/tap', { x: 540, y: 500 }] },
  { name: 'wait', mcp: ['android_wait', { ms: 0 }], http: ['POST', '/wait', { ms: 0 }] },
  { name: 'tree', mcp: ['android_ui_tree', {}], http: ['GET', '/screen'] },
  {
    name: 'tap by query',
    mcp: ['android_tap', { query: { text: 'Settings', role: 'button' } }],
    http: ['POST', '/tap_text', { text: 'Settings' }],
  },
  { name: 'wait_for', mcp: ['android_wait_for', { text: 'Messages' }], http: ['POST', '/find_nodes', { text: 'Messages' }] },
];

async function startRelay(evidence, code) {
  const { createRelay } = dist('apps/relay/src/relay.js');
  const { loadConfig } = dist('apps/relay/src/common/config/config.js');
  const home = fs.mkdtempSync(path.join(arg('log-dir', os.tmpdir()), 'svc-bench-mcp-loop-'));
  const env = { SVC_HOME: home, RELAY_HOST: '127.0.0.1', RELAY_PORT: '0', RELAY_LOG_LEVEL: 'ERROR', RELAY_BRIDGE_EVIDENCE: evidence };
  const relay = await createRelay({ config: loadConfig(env), logDestination: new Writable({ write: (_c, _e, cb) => cb() }) });
  // The per-device event budget (5 a second) would refuse a loop's commands from one device: the disk guard stays.
  relay.loop.admission = (events) => relay.disk.admit(events);
  const reg = await fetch(`${relay.url}/pairing/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  if (reg.status !== 200) throw new Error(`register: ${reg.status}`);
  const tokenFile = path.join(home, 'sim-token');
  const bin = path.join(__dirname, '..', 'bin', 'svc');
  const simArgs = ['phone-sim', '--relay', relay.url.replace(/^http/, 'ws'), '--code', code, '--mode', 'app', '--screen', '1080x2340'];
  const sim = spawn(process.execPath, [bin, ...simArgs, '--device-id', `bench-${code}`, '--save-token', tokenFile, '--quiet'], { stdio: 'ignore' });
  while (!fs.existsSync(tokenFile) || fs.readFileSync(tokenFile, 'utf8').trim() === '') await new Promise((r) => setTimeout(r, 10));
  const token = fs.readFileSync(tokenFile, 'utf8').trim();
  while (!relay.loop.models.bridge.device(token.slice(0, 8))) await new Promise((r) => setTimeout(r, 5));
  return {
    relay,
    token,
    close: async () => {
      sim.kill();
      await relay.close('bench done');
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
}

async function mcpClient(r, name) {
  const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${r.relay.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${r.token}` } } }),
  );
  return client;
}

/** Runs one step of a subject; returns ms, or throws when the answer is a refusal (a bench must not time errors). */
async function step(subject, s) {
  const t = process.hrtime.bigint();
  if (subject.kind === 'http') {
    const [method, p, body] = s.http;
    const res = await fetch(`${subject.url}${p}`, {
      method,
      headers: { authorization: `Bearer ${subject.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    await res.arrayBuffer();
    if (res.status >= 300) throw new Error(`${s.name} over HTTP: ${res.status}`);
  } else {
    const [tool, args] = s.mcp;
    const r = await subject.client.callTool({ name: tool, arguments: args });
    if (r.isError) throw new Error(`${s.name} over MCP: ${JSON.stringify(r.content)}`);
  }
  return Number(process.hrtime.bigint() - t) / 1e6;
}

async function main() {
  const started = Date.now();
  const a = await startRelay('mcp', 'LOOPA1');
  const b = await startRelay('off', 'LOOPB1');
  const subjects = [
    { id: 'http', kind: 'http', url: a.relay.url, token: a.token },
    { id: 'mcp', kind: 'mcp', client: await mcpClient(a, 'bench-loop') },
    { id: 'mcp-noev', kind: 'mcp', client: await mcpClient(b, 'bench-loop') },
  ];
  const times = Object.fromEntries(subjects.map((s) => [s.id, Object.fromEntries(STEPS.map((st) => [st.name, []]))]));
  const loopMs = Object.fromEntries(subjects.map((s) => [s.id, []]));
  for (let i = 0; i < WARMUP + LOOPS; i++) {
    for (let k = 0; k < subjects.length; k++) {
      const subject = subjects[(i + k) % subjects.length];
      let total = 0;
      for (const s of STEPS) {
        if (subject.kind === 'http' && !s.http) continue;
        const ms = await step(subject, s);
        total += ms;
        if (i >= WARMUP) times[subject.id][s.name].push(ms);
      }
      if (i >= WARMUP) loopMs[subject.id].push(total);
    }
  }
  for (const s of subjects) if (s.client) await s.client.close();
  await a.close();
  await b.close();

  const f = (x) => (x === null ? '-' : x.toFixed(2));
  const m = (id, name) => (times[id][name].length ? median(times[id][name]) : null);
  const ratio = (x, y) => (x === null || y === null ? '-' : `${(x / y).toFixed(2)}x`);
  console.log(`${LOOPS} loops of each subject after ${WARMUP} warm-up, interleaved; node ${process.version}, load avg ${os.loadavg()[0].toFixed(1)}`);
  console.log('step          http p50 ms   mcp p50 ms   mcp no-evidence   mcp / http   mcp / no-evidence');
  const row = (name, h, mc, off) =>
    console.log(
      `${name.padEnd(13)} ${f(h).padStart(11)} ${f(mc).padStart(12)} ${f(off).padStart(17)} ${ratio(mc, h).padStart(12)} ${ratio(mc, off).padStart(19)}`,
    );
  for (const s of STEPS) row(s.name, m('http', s.name), m('mcp', s.name), m('mcp-noev', s.name));
  row('whole loop', median(loopMs.http), median(loopMs.mcp), median(loopMs['mcp-noev']));
  const tapCost = m('mcp', 'tap') - m('mcp-noev', 'tap');
  console.log(`evidence costs ${tapCost.toFixed(2)} ms p50 per action (tap with RELAY_BRIDGE_EVIDENCE=mcp minus off)`);
  console.log('screenshot: HTTP answers the phone’s PNG as is; MCP scales it to 2000 px JPEG (bench/mcp-screens.js has that cost alone)');
  console.log(`bench time ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
