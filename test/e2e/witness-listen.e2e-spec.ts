import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { pairPhone, startRelay, tempHome, type TestRelay } from '../support/harness';
import { svc } from '../support/cli';
import { ensureBuilt, spawnSvc, type SvcProcess } from '../support/dist';

/**
 * `svc relay witness --listen` as a C2SP tlog-witness server (c2sp.org/tlog-witness, "add-checkpoint"),
 * a real process, driven by a client written here from the spec (request bodies built by hand: an
 * `old N` line, proof lines, an empty line, the checkpoint) with the relay's real checkpoints and
 * consistency proofs, and the cosignatures checked here with node:crypto from c2sp.org/tlog-cosignature.
 */
jest.setTimeout(120_000);

const DASH = '\u2014';
const until = async (what: () => boolean, show: () => string) => {
  for (const deadline = Date.now() + 30_000; !what(); await new Promise((r) => setTimeout(r, 25)))
    if (Date.now() > deadline) throw new Error(`not seen in time\n${show()}`);
};
const textOf = (note: string) => note.slice(0, note.indexOf('\n\n') + 1);
const sizeOf = (note: string) => Number(textOf(note).split('\n')[1]);

/** tlog-witness: `old <N>\n`, one base64 hash a line, an empty line, then the checkpoint (a signed note). */
const addBody = (old: number | string, proof: string[], checkpoint: string) => `old ${old}\n${proof.map((h) => `${h}\n`).join('')}\n${checkpoint}`;

type Answer = { status: number; type: string | null; text: string };
async function post(url: string, body: string | Buffer, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(`${url}/add-checkpoint`, { method: 'POST', body, ...init });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

/** signed-note: a key ID is SHA-256(name || 0x0A || type || public key)[:4]. */
const keyId = (name: string, type: number, raw: Buffer) =>
  createHash('sha256')
    .update(Buffer.concat([Buffer.from(`${name}\n`), Buffer.from([type]), raw]))
    .digest()
    .subarray(0, 4);
const rawOf = (k: KeyObject) => Buffer.from(createPublicKey(k).export({ format: 'jwk' }).x!, 'base64url');

/** A checkpoint note of `text` signed (Ed25519, type 0x01) by `key` under `name`. */
const signed = (text: string, name: string, key: KeyObject) =>
  `${text}\n${DASH} ${name} ${Buffer.concat([keyId(name, 1, rawOf(key)), sign(null, Buffer.from(text), key)]).toString('base64')}\n`;

/**
 * tlog-cosignature v1: the line is `— <name> base64(key ID || u64 BE time || Ed25519 signature)`, the key ID
 * of type 0x04, the signed message `cosignature/v1\ntime <t>\n` and the checkpoint text. Returns the time.
 */
function checkCosignature(line: string, checkpointText: string, vkey: string): number {
  const name = vkey.slice(0, vkey.indexOf('+'));
  const [hashHex, keyB64] = [vkey.slice(name.length + 1, name.length + 9), vkey.slice(name.length + 10)];
  const key = Buffer.from(keyB64, 'base64');
  expect(key[0]).toBe(0x04);
  expect(keyId(name, 0x04, key.subarray(1)).toString('hex')).toBe(hashHex);
  expect(line.startsWith(`${DASH} ${name} `) && line.endsWith('\n')).toBe(true);
  const blob = Buffer.from(line.slice(`${DASH} ${name} `.length, -1), 'base64');
  expect(blob.length).toBe(4 + 8 + 64);
  expect(blob.subarray(0, 4).toString('hex')).toBe(hashHex);
  const time = Number(blob.readBigUInt64BE(4));
  const pub = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: key.subarray(1).toString('base64url') }, format: 'jwk' });
  expect(verify(null, Buffer.from(`cosignature/v1\ntime ${time}\n${checkpointText}`), pub, blob.subarray(12))).toBe(true);
  return time;
}

async function settle(relay: TestRelay): Promise<void> {
  while (relay.loop.models.connections.count() > 0) await new Promise((r) => setTimeout(r, 10));
  await relay.loop.drain();
}

describe('svc relay witness --listen: C2SP tlog-witness add-checkpoint', () => {
  let relay: TestRelay;
  let logVkey: string;
  let logName: string;
  let wvkey: string;
  let witness: SvcProcess;
  let url: string;
  const home = tempHome();
  const running: SvcProcess[] = [];
  const checkpoint = async () => (await fetch(`${relay.url}/log/checkpoint`)).text();
  const proof = async (from: number, to: number) =>
    ((await (await fetch(`${relay.url}/log/proof/consistency?from=${from}&to=${to}`)).json()) as { consistency: string[] }).consistency;
  const grow = async () => {
    await pairPhone(relay).then((p) => p.phone.close());
    await settle(relay);
  };
  const kept = () => JSON.parse(fs.readFileSync(path.join(home, 'state.json'), 'utf8')) as { size: number; root: string };
  const refusals = () =>
    fs.existsSync(path.join(home, 'refusals.jsonl'))
      ? fs
          .readFileSync(path.join(home, 'refusals.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { code: string; relay: string; checkpoint: { size: number } })
      : [];
  const serve = async (dir: string, extra: string[] = []) => {
    const p = spawnSvc(['relay', 'witness', '--home', dir, '--log-vkey', logVkey, '--listen', '127.0.0.1:0', ...extra], { NO_COLOR: '1' });
    running.push(p);
    await until(
      () => /listening on http:\/\/127\.0\.0\.1:\d+\n/.test(p.stdout()) || p.child.exitCode !== null,
      () => p.stdout() + p.stderr(),
    );
    return { p, url: /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(p.stdout())![1] };
  };

  beforeAll(async () => {
    ensureBuilt();
    relay = await startRelay({ env: { RELAY_CHECKPOINT_PUBLISH_SECONDS: '0' } });
    await grow();
    logVkey = (await svc(['relay', 'events', 'vkey'], { SVC_HOME: relay.home })).stdout.trim();
    logName = logVkey.split('+')[0];
    wvkey = (await svc(['relay', 'witness', '--home', home, '--name', 'witness.test/push', '--print-vkey'])).stdout.trim();
    ({ p: witness, url } = await serve(home));
  });
  afterAll(async () => {
    for (const p of running) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await relay?.close();
  });

  it('serves POST /add-checkpoint only: 405 (Allow: POST) for other methods, 404 for other paths', async () => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const res = await fetch(`${url}/add-checkpoint`, { method });
      expect([method, res.status, res.headers.get('allow')]).toEqual([method, 405, 'POST']);
      expect(await res.json()).toMatchObject({ ok: false, code: 'witness.method_not_allowed' });
    }
    for (const p of ['/', '/add-checkpoint/', '/log/checkpoint', '/add-checkpointx'])
      expect([p, (await fetch(`${url}${p}`, { method: 'POST', body: 'old 0\n\n' })).status]).toEqual([p, 404]);
  });

  it('cosigns a first checkpoint (old 0): 200, one cosignature/v1 line under the witness key, the tree kept', async () => {
    const cp = await checkpoint();
    // From size 0 the proof is empty: a proof there is refused (422) and nothing was cosigned, so no refusal.
    const withProof = await post(url, addBody(0, [Buffer.alloc(32).toString('base64')], cp));
    expect(withProof.status).toBe(422);
    expect(fs.existsSync(path.join(home, 'state.json'))).toBe(false);
    const before = Math.floor(Date.now() / 1000);
    const r = await post(url, addBody(0, [], cp));
    expect(r.status).toBe(200);
    expect(r.text.split('\n')).toHaveLength(2);
    const time = checkCosignature(r.text, textOf(cp), wvkey);
    expect(time).toBeGreaterThanOrEqual(before);
    expect(time).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(kept()).toMatchObject({ origin: logName, size: sizeOf(cp), root: textOf(cp).split('\n')[2] });
    await until(
      () => witness.stdout().includes(`cosigned  ${logName} tree size ${sizeOf(cp)} (add-checkpoint from 127.0.0.1; first checkpoint seen)`),
      () => witness.stdout(),
    );
    // The same tree again (old = size, same root, empty proof) is cosigned again, without rewriting the state
    // (a replayed public checkpoint costs a signature, not a write: the file is the same inode).
    const inode = fs.statSync(path.join(home, 'state.json')).ino;
    const again = await post(url, addBody(sizeOf(cp), [], cp));
    expect(again.status).toBe(200);
    checkCosignature(again.text, textOf(cp), wvkey);
    expect(fs.statSync(path.join(home, 'state.json')).ino).toBe(inode);
    expect(refusals()).toEqual([]);
  });

  it('answers a stale old size 409 with text/x.tlog.size and the size it cosigned; an old size past the checkpoint 400', async () => {
    const cp = await checkpoint();
    const n = kept().size;
    for (const old of [0, n - 1]) {
      const r = await post(url, addBody(old, [], cp));
      expect([old, r.status, r.type, r.text]).toEqual([old, 409, 'text/x.tlog.size', `${n}\n`]);
    }
    const r = await post(url, addBody(n + 1, [], cp));
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text)).toMatchObject({ ok: false, code: 'witness.old_too_large' });
    expect(refusals()).toEqual([]);
  });

  it('cosigns the next checkpoint with a correct consistency proof', async () => {
    const from = kept().size;
    await grow();
    const cp = await checkpoint();
    expect(sizeOf(cp)).toBeGreaterThan(from);
    const r = await post(url, addBody(from, await proof(from, sizeOf(cp)), cp));
    expect(r.status).toBe(200);
    checkCosignature(r.text, textOf(cp), wvkey);
    expect(kept().size).toBe(sizeOf(cp));
    await until(
      () => witness.stdout().includes(`tree size ${sizeOf(cp)} (add-checkpoint from 127.0.0.1; consistent with ${from}`),
      () => witness.stdout(),
    );
  });

  it('answers a proof that does not verify 422, not cosigned and not a refusal (anyone can send the public checkpoint with a made-up proof); the kept tree stays', async () => {
    const from = kept().size;
    await grow();
    const cp = await checkpoint();
    const good = await proof(from, sizeOf(cp));
    const bad = [...good.slice(0, -1), Buffer.alloc(32, 7).toString('base64')];
    for (let i = 0; i < 2; i++) {
      const r = await post(url, addBody(from, bad, cp));
      expect(r.status).toBe(422);
      expect(JSON.parse(r.text)).toMatchObject({ ok: false, code: 'witness.inconsistent' });
    }
    // An unsigned proof proves nothing about the log: no record, no alarm, no exit status.
    expect(refusals()).toEqual([]);
    expect(witness.stderr()).not.toContain('WITNESS REFUSED');
    expect(kept().size).toBe(from);
    // The right proof for the same checkpoint is then cosigned.
    expect((await post(url, addBody(from, good, cp))).status).toBe(200);
  });

  it('refuses another root at the size it cosigned (409, not the size answer), recorded as rewritten', async () => {
    const cp = await checkpoint();
    const [origin, size] = textOf(cp).split('\n');
    const relayKey = createPrivateKey(fs.readFileSync(path.join(relay.home, 'relay', 'checkpoint-key.pem')));
    const other = signed(`${origin}\n${size}\n${Buffer.alloc(32, 9).toString('base64')}\n`, logName, relayKey);
    const r = await post(url, addBody(Number(size), [], other));
    expect(r.status).toBe(409);
    expect(r.type).toBe('application/json');
    expect(JSON.parse(r.text)).toMatchObject({ ok: false, code: 'witness.rewritten' });
    expect(refusals()).toEqual([
      expect.objectContaining({
        code: 'rewritten',
        relay: 'add-checkpoint from 127.0.0.1',
        checkpoint: expect.objectContaining({ size: Number(size) }),
      }),
    ]);
    expect(fs.readFileSync(path.join(home, 'witness.prom'), 'utf8')).toContain('svc_witness_refusals_total 1');
    // The same signed fork again is one record (a peer replaying it cannot fill the disk), said loudly once.
    expect((await post(url, addBody(Number(size), [], other))).status).toBe(409);
    expect(refusals()).toHaveLength(1);
    await until(
      () => /WITNESS REFUSED {2}add-checkpoint from 127\.0\.0\.1: .*\(rewritten; recorded in /.test(witness.stderr()),
      () => witness.stderr(),
    );
    expect(kept().root).toBe(textOf(cp).split('\n')[2]);
  });

  it('404 for an origin it does not follow; 403 when no signature of the log key verifies', async () => {
    const cp = await checkpoint();
    const [, size, root] = textOf(cp).split('\n');
    const stranger = generateKeyPairSync('ed25519').privateKey;
    const elsewhere = await post(url, addBody(0, [], signed(`other.example/log\n${size}\n${root}\n`, 'other.example/log', stranger)));
    expect(elsewhere.status).toBe(404);
    // The log's origin, signed by another key under the log's name (an unknown key: ignored, so unsigned).
    const forged = signed(textOf(cp), logName, stranger);
    // A line naming the log's key whose signature fails (signed-note: the note is malformed).
    const sig = cp.slice(cp.indexOf('\n\n') + 2);
    const blob = Buffer.from(sig.slice(`${DASH} ${logName} `.length, -1), 'base64');
    blob[10] ^= 1;
    const broken = `${textOf(cp)}\n${DASH} ${logName} ${blob.toString('base64')}\n`;
    for (const note of [forged, broken]) {
      const r = await post(url, addBody(kept().size, [], note));
      expect(r.status).toBe(403);
      expect(JSON.parse(r.text)).toMatchObject({ ok: false, code: 'witness.not_signed' });
    }
    expect(refusals()).toHaveLength(1);
  });

  it('answers malformed bodies 400, at most 63 proof lines, and 413 past 64 KiB (announced or streamed)', async () => {
    const cp = await checkpoint();
    const n = kept().size;
    const h = Buffer.alloc(32, 1).toString('base64');
    const bodies = [
      '',
      'old\n\n' + cp,
      'old 01\n\n' + cp,
      'old -1\n\n' + cp,
      `old ${n} \n\n` + cp,
      'old 99999999999999999\n\n' + cp,
      `old ${n}\r\n\r\n` + cp,
      `OLD ${n}\n\n` + cp,
      `old ${n}\n` + cp.replace('\n\n', '\n'),
      `old ${n}\n${h}`,
      `old ${n}\n${h.slice(0, -2)}\n\n` + cp,
      `old ${n}\n${Buffer.alloc(31).toString('base64')}\n\n` + cp,
      `old ${n}\nAAAA${h.slice(4).replace('=', '-')}\n\n` + cp,
      `old ${n}\n\n${textOf(cp)}`,
      `old ${n}\n\nnot a checkpoint\n\n${DASH} x AAAA\n`,
      `old ${n}\n\n${cp.replace(/\n(\d+)\n/, '\n0$1\n')}`,
    ];
    for (const body of bodies) {
      const r = await post(url, body);
      expect([body.slice(0, 40), r.status]).toEqual([body.slice(0, 40), 400]);
      expect(JSON.parse(r.text)).toMatchObject({ ok: false });
    }
    // 63 proof lines are read (then the stale old size is answered); a 64th is refused.
    expect((await post(url, addBody(0, Array(63).fill(h), cp))).status).toBe(409);
    const many = await post(url, addBody(0, Array(64).fill(h), cp));
    expect(many.status).toBe(400);
    expect(JSON.parse(many.text).error).toContain('63');
    const big = Buffer.alloc(64 * 1024 + 1, 0x41);
    const announced = await post(url, big);
    expect(announced.status).toBe(413);
    expect(JSON.parse(announced.text)).toMatchObject({ ok: false, code: 'witness.too_large' });
    // Refused on the announced length, before a byte of the body: the answer comes though none is sent.
    const unsent = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${url}/add-checkpoint`, { method: 'POST', headers: { 'content-length': String(10 << 20) } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
        req.destroy();
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(unsent).toBe(413);
    const streamed = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${url}/add-checkpoint`, { method: 'POST' }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      for (let i = 0; i < 80; i++) req.write(Buffer.alloc(1024, 0x41)); // chunked: no Content-Length to go by
      req.end();
    });
    expect(streamed).toBe(413);
    expect(refusals()).toHaveLength(1);
  });

  it('keeps a connection alive across requests', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const cp = await checkpoint();
    const once = () =>
      new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
        const req = http.request(`${url}/add-checkpoint`, { method: 'POST', agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode!, reused: req.reusedSocket }));
        });
        req.on('error', reject);
        req.end(addBody(0, [], cp));
      });
    expect(await once()).toEqual({ status: 409, reused: false });
    expect(await once()).toEqual({ status: 409, reused: true });
    agent.destroy();
  });

  it('updates atomically: of concurrent submissions from the same old size exactly one wins, the others get 409 with its size', async () => {
    const from = kept().size;
    await grow();
    const a = await checkpoint();
    await grow();
    const b = await checkpoint();
    const [pa, pb] = [await proof(from, sizeOf(a)), await proof(from, sizeOf(b))];
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => post(url, i % 2 ? addBody(from, pa, a) : addBody(from, pb, b))));
    const won = answers.filter((r) => r.status === 200);
    expect(won).toHaveLength(1);
    const winner = kept().size;
    expect([sizeOf(a), sizeOf(b)]).toContain(winner);
    for (const r of answers.filter((x) => x.status !== 200)) expect([r.status, r.type, r.text]).toEqual([409, 'text/x.tlog.size', `${winner}\n`]);
    // Never rolled back: the loser's smaller tree (if it lost) was not kept after the larger.
    expect(kept().size).toBe(winner);
  });

  it("drops a peer that never finishes its headers (408 and closed, well before Node's own 60 s)", async () => {
    const { port } = new URL(url);
    const answer = await new Promise<string>((resolve, reject) => {
      const s = net.connect(Number(port), '127.0.0.1', () => s.write('POST /add-checkpoint HTTP/1.1\r\nHost: w\r\n'));
      let got = '';
      s.on('data', (c: Buffer) => (got += c.toString()));
      s.on('close', () => resolve(got));
      s.on('error', reject);
      // Past the witness's 10 s header timeout (enforced every 2 s), short of Node's default 60 s.
      setTimeout(() => reject(new Error('still open after 30 s')), 30_000).unref();
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('keeps other processes off a served home, and stops on SIGTERM with exit 1 after a refusal', async () => {
    const pull = await svc(['relay', 'witness', '--home', home, '--relay', relay.url]);
    expect(pull.code).toBe(1);
    expect(pull.stderr).toContain(`served by process ${witness.child.pid}`);
    const second = await svc(['relay', 'witness', '--home', home, '--listen', '127.0.0.1:0']);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('already served by process');
    witness.child.kill('SIGTERM');
    expect(await witness.exited).toEqual({ code: 1, signal: null });
    expect(witness.stderr()).toContain('witness: stopped (a refusal was reported; exit 1)');
    expect(fs.existsSync(path.join(home, 'serve.pid'))).toBe(false);
  });
});
