#!/usr/bin/env node
/**
 * GET /media/{token} throughput on a large file over loopback, side by side in one run with:
 *   - nginx (Debian package) serving the same file with sendfile,
 *   - a bare Node http server streaming it: fs.createReadStream at 64 KiB, 1 MiB and 4 MiB chunks, and a
 *     read loop over two reused 1 MiB buffers (the fastest bare stream found so far).
 * Clients are curl processes (the same client for every server), 1 and 8 at a time, to /dev/null.
 * Rounds are interleaved across servers (each round starting with another one) so noise spreads evenly.
 * The relay runs in its own process; its RSS is sampled from /proc during its transfers.
 *
 * Needs the compiled relay:
 *   npx tsc -p tsconfig.build.json && npx tsc-alias -p tsconfig.build.json
 * Run:
 *   node bench/media.js            # 1 GiB file, 4 rounds (about 100 s)
 *   MEDIA_BENCH_MB=256 MEDIA_BENCH_ROUNDS=2 node bench/media.js
 */
const { spawn, fork } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const RELAY_JS = path.join(ROOT, 'dist/apps/relay/src/relay.js');
const CONFIG_JS = path.join(ROOT, 'dist/apps/relay/src/common/config/config.js');
const SIZE_MB = Number(process.env.MEDIA_BENCH_MB || 1024);
const ROUNDS = Number(process.env.MEDIA_BENCH_ROUNDS || 4);
const CONCURRENCY = [1, 8];

const role = process.argv[2];
if (role === '--relay') relayChild();
else if (role === '--bare') bareChild();
else
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });

// ---- children -------------------------------------------------------------------------------

async function relayChild() {
  const { createRelay } = require(RELAY_JS);
  const { loadConfig } = require(CONFIG_JS);
  const home = process.env.BENCH_HOME;
  const env = { SVC_HOME: home, RELAY_HOST: '127.0.0.1', RELAY_PORT: '0', RELAY_LOG_LEVEL: 'ERROR', RELAY_MEDIA_MAX_SIZE_MB: String(SIZE_MB + 16) };
  const relay = await createRelay({ config: loadConfig(env) });
  const code = 'BENCH1';
  let res = await fetch(`${relay.url}/pairing/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  if (res.status !== 200) throw new Error(`pairing/register ${res.status}`);
  const WebSocket = require('ws');
  const ws = new WebSocket(relay.url.replace(/^http/, 'ws') + '/ws');
  const bearer = await new Promise((resolve, reject) => {
    ws.on('open', () =>
      ws.send(
        JSON.stringify({ channel: 'system', type: 'auth', id: 'a', payload: { pairing_code: code, device_name: 'bench', device_id: 'bench' } }),
      ),
    );
    ws.on('message', (d) => {
      const f = JSON.parse(d.toString());
      if (f.type === 'auth.ok') resolve(f.payload.session_token);
      else if (f.type === 'auth.fail') reject(new Error('auth failed'));
    });
    ws.on('error', reject);
  });
  ws.close();
  res = await fetch(`${relay.url}/media/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ path: process.env.BENCH_FILE, content_type: 'application/octet-stream', file_name: 'big.bin' }),
  });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`media/register ${res.status} ${JSON.stringify(body)}`);
  process.send({ url: `${relay.url}/media/${body.token}`, bearer });
  process.on('message', async (m) => {
    if (m === 'stop') {
      await relay.close('bench done');
      process.exit(0);
    }
  });
}

/**
 * The bare baselines: `?hwm=N` pipes fs.createReadStream with that chunk size; `?loop=N` reads into two
 * reused N-byte buffers with fs read and writes each once the other is flushed (no allocation per chunk).
 */
function bareChild() {
  const file = process.env.BENCH_FILE;
  const server = http.createServer((req, res) => {
    const q = new URL(req.url, 'http://x').searchParams;
    const size = fs.statSync(file).size;
    const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range || '');
    const start = m ? Number(m[1]) : 0;
    const end = m ? Math.min(Number(m[2]), size - 1) : size - 1;
    const headers = { 'content-type': 'application/octet-stream', 'content-length': String(end - start + 1) };
    if (m) headers['content-range'] = `bytes ${start}-${end}/${size}`;
    res.writeHead(m ? 206 : 200, headers);
    if (q.has('loop')) readLoop(file, Number(q.get('loop')), start, end, res).catch((err) => res.destroy(err));
    else fs.createReadStream(file, { start, end, highWaterMark: Number(q.get('hwm')) }).pipe(res);
  });
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
}

async function readLoop(file, size, start, end, res) {
  const fh = await fs.promises.open(file);
  try {
    const bufs = [Buffer.allocUnsafe(size), Buffer.allocUnsafe(size)];
    const flushed = [Promise.resolve(), Promise.resolve()];
    let i = 0;
    let pos = start;
    while (pos <= end) {
      await flushed[i];
      const { bytesRead } = await fh.read(bufs[i], 0, Math.min(size, end - pos + 1), pos);
      if (bytesRead === 0) break;
      pos += bytesRead;
      const chunk = bytesRead === size ? bufs[i] : bufs[i].subarray(0, bytesRead);
      flushed[i] = new Promise((resolve, reject) => res.write(chunk, (err) => (err ? reject(err) : resolve())));
      i ^= 1;
    }
    await Promise.all(flushed);
    res.end();
  } finally {
    await fh.close();
  }
}

// ---- the run --------------------------------------------------------------------------------

async function main() {
  if (!fs.existsSync(RELAY_JS)) {
    console.error(`build the relay first: npx tsc -p tsconfig.build.json && npx tsc-alias -p tsconfig.build.json`);
    process.exit(2);
  }
  const nginxBin = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => fs.existsSync(p));
  if (!nginxBin) {
    console.error('nginx not found: apt-get install -y nginx');
    process.exit(2);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-media-bench-'));
  fs.chmodSync(dir, 0o755);
  const file = path.join(dir, 'big.bin');
  const children = [];
  let nginx = null;
  const cleanup = () => {
    for (const c of children) c.kill('SIGTERM');
    if (nginx) nginx.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.on('SIGINT', () => {
    cleanup();
    process.exit(130);
  });
  try {
    writeFile(file, SIZE_MB);
    const env = { ...process.env, BENCH_FILE: file, BENCH_HOME: path.join(dir, 'home') };

    const relayProc = fork(__filename, ['--relay'], { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children.push(relayProc);
    const relay = await once(relayProc);
    const bareProc = fork(__filename, ['--bare'], { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children.push(bareProc);
    const bare = await once(bareProc);
    const nginxPort = await freePort();
    nginx = startNginx(nginxBin, dir, nginxPort);
    await waitHttp(`http://127.0.0.1:${nginxPort}/big.bin`);

    const targets = [
      { name: 'relay GET /media/{token}', url: relay.url, headers: [`Authorization: Bearer ${relay.bearer}`], pid: relayProc.pid },
      { name: 'nginx sendfile', url: `http://127.0.0.1:${nginxPort}/big.bin`, headers: [] },
      { name: 'bare node hwm 64 KiB', url: `http://127.0.0.1:${bare.port}/?hwm=${64 * 1024}`, headers: [] },
      { name: 'bare node hwm 1 MiB', url: `http://127.0.0.1:${bare.port}/?hwm=${1024 * 1024}`, headers: [] },
      { name: 'bare node hwm 4 MiB', url: `http://127.0.0.1:${bare.port}/?hwm=${4 * 1024 * 1024}`, headers: [] },
      { name: 'bare node read loop 1 MiB', url: `http://127.0.0.1:${bare.port}/?loop=${1024 * 1024}`, headers: [] },
    ];
    // Warm the page cache and every server once.
    for (const t of targets) await download(t, 1);

    const results = {};
    const rss = { before: rssMiB(relayProc.pid), samples: [] };
    const t0 = Date.now();
    for (const c of CONCURRENCY) {
      for (let r = 0; r < ROUNDS; r++) {
        // Each round starts with a different server, so no one always runs first (or last).
        for (const t of [...targets.slice(r % targets.length), ...targets.slice(0, r % targets.length)]) {
          const sampler = t.pid ? setInterval(() => rss.samples.push(rssMiB(t.pid)), 50) : null;
          const gbps = await download(t, c);
          if (sampler) clearInterval(sampler);
          ((results[c] ??= {})[t.name] ??= []).push(gbps);
        }
      }
    }
    const elapsed = (Date.now() - t0) / 1000;
    report(results, rss, elapsed, relayProc.pid);
    relayProc.send('stop');
    await new Promise((r) => relayProc.once('exit', r));
  } finally {
    cleanup();
  }
}

function writeFile(file, mb) {
  const block = Buffer.alloc(1024 * 1024);
  for (let i = 0; i < block.length; i += 4) block.writeUInt32LE((i * 2654435761) >>> 0, i);
  const fd = fs.openSync(file, 'w', 0o644);
  for (let i = 0; i < mb; i++) fs.writeSync(fd, block);
  fs.closeSync(fd);
}

/**
 * `n` curl clients at once. One client downloads the whole file; n clients each download their own
 * 1/n of it with a Range request (so every cell moves the same 1 file's worth of bytes, and seeking
 * clients are what several phones playing one video look like). Aggregate GB/s (1e9 bytes).
 */
async function download(target, n) {
  const total = SIZE_MB * 1024 * 1024;
  const slice = Math.floor(total / n);
  const started = process.hrtime.bigint();
  const sizes = await Promise.all(
    Array.from(
      { length: n },
      (_, k) =>
        new Promise((resolve, reject) => {
          const range = n === 1 ? [] : ['-r', `${k * slice}-${k === n - 1 ? total - 1 : (k + 1) * slice - 1}`];
          const args = [
            '-s',
            '-o',
            '/dev/null',
            '-w',
            '%{http_code} %{size_download}',
            ...range,
            ...target.headers.flatMap((h) => ['-H', h]),
            target.url,
          ];
          const p = spawn('curl', args);
          let out = '';
          p.stdout.on('data', (d) => (out += d));
          p.on('close', (code) => {
            const [status, bytes] = out.trim().split(' ');
            if (code !== 0 || status !== (n === 1 ? '200' : '206')) reject(new Error(`${target.name}: curl exit ${code}, HTTP ${status}`));
            else resolve(Number(bytes));
          });
        }),
    ),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const got = sizes.reduce((a, b) => a + b, 0);
  if (got !== total) throw new Error(`${target.name}: downloaded ${got} of ${total} bytes`);
  return sizes.reduce((a, b) => a + b, 0) / seconds / 1e9;
}

function report(results, rss, elapsed, pid) {
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  console.log(
    `\nmedia bench: ${SIZE_MB} MiB file, ${ROUNDS} rounds per cell, curl clients, node ${process.version}, ${os.cpus().length} cores (shared)`,
  );
  for (const c of CONCURRENCY) {
    const cell = results[c];
    const m = Object.fromEntries(Object.entries(cell).map(([k, v]) => [k, median(v)]));
    const relay = m['relay GET /media/{token}'];
    const bareNames = Object.keys(m).filter((k) => k.startsWith('bare'));
    const bestName = bareNames.reduce((a, b) => (m[a] >= m[b] ? a : b));
    const bestBare = m[bestName];
    console.log(`\n${c} client${c > 1 ? 's' : ''} (median GB/s, rounds in brackets)`);
    for (const [k, v] of Object.entries(m))
      console.log(`  ${k.padEnd(27)} ${v.toFixed(2).padStart(6)}   [${cell[k].map((x) => x.toFixed(2)).join(', ')}]`);
    console.log(`  relay / nginx              ${(relay / m['nginx sendfile']).toFixed(2)}   (target >= 0.8)`);
    console.log(`  relay / best bare node     ${(relay / bestBare).toFixed(2)}   (target >= 0.9; best: ${bestName})`);
    console.log(`  bare 1 MiB / bare 64 KiB   ${(m['bare node hwm 1 MiB'] / m['bare node hwm 64 KiB']).toFixed(2)}`);
  }
  const max = Math.max(...rss.samples);
  console.log(
    `\nrelay RSS (pid ${pid}): before ${rss.before.toFixed(0)} MiB, during transfers max ${max.toFixed(0)} MiB, median ${median(rss.samples).toFixed(0)} MiB (${rss.samples.length} samples)`,
  );
  console.log(`measured in ${elapsed.toFixed(0)} s`);
}

function rssMiB(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

function startNginx(bin, dir, port) {
  const conf = path.join(dir, 'nginx.conf');
  fs.writeFileSync(
    conf,
    `daemon off;
worker_processes auto;
user root;
pid ${dir}/nginx.pid;
error_log ${dir}/nginx-error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  client_body_temp_path ${dir}/nginx-tmp;
  proxy_temp_path ${dir}/nginx-tmp;
  fastcgi_temp_path ${dir}/nginx-tmp;
  uwsgi_temp_path ${dir}/nginx-tmp;
  scgi_temp_path ${dir}/nginx-tmp;
  server {
    listen 127.0.0.1:${port};
    root ${dir};
    location / { }
  }
}
`,
  );
  const p = spawn(bin, ['-c', conf, '-p', dir, '-e', `${dir}/nginx-error.log`], { stdio: 'inherit' });
  return p;
}

function once(child) {
  return new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`child exited ${code}`)));
  });
}

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitHttp(url) {
  for (let i = 0; i < 100; i++) {
    try {
      const res = await fetch(url, { method: 'HEAD' });
      if (res.ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${url} did not come up`);
}
