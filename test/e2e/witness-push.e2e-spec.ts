import { createHash, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Scheduler } from '../../apps/relay/src/common/loop/scheduler';
import { WitnessPushService } from '../../apps/relay/src/transparency/witness-push.service';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { svc } from '../support/cli';
import { ensureBuilt, spawnSvc, type SvcProcess } from '../support/dist';
import { pairPhone, startRelay, tempHome, type TestRelay } from '../support/harness';
import { waitFor } from '../support/standby';
import { relayWithListeningWitness, submitRound } from '../support/witness';

/**
 * The relay submits its checkpoints to standard witnesses (C2SP tlog-witness `add-checkpoint`, setting
 * RELAY_WITNESS_URLS). The witness here is written in this test from the specs (tlog-witness, signed-note,
 * tlog-cosignature, RFC 9162 2.1.4.2), sharing no code with the relay: what it accepts is what any
 * standard witness would.
 */
jest.setTimeout(60_000);

const EM = '\u2014 ';
const sha256 = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
const rawPublic = (k: KeyObject) => k.export({ format: 'der', type: 'spki' }).subarray(-32);
const keyId = (name: string, type: number, pub: Buffer) => sha256(Buffer.from(`${name}\n`), Buffer.from([type]), pub).subarray(0, 4);

/** RFC 9162 2.1.4.2: does `proof` show the tree of `m` leaves (root `r1`) is a prefix of the tree of `n` (root `r2`)? */
function consistent(m: number, n: number, r1: Buffer, r2: Buffer, proof: Buffer[]): boolean {
  const node = (l: Buffer, r: Buffer) => sha256(Buffer.from([1]), l, r);
  if (m === n) return proof.length === 0 && r1.equals(r2);
  if (proof.length === 0) return false;
  const path = m > 0 && (m & (m - 1)) === 0 ? [r1, ...proof] : [...proof];
  let fn = m - 1;
  let sn = n - 1;
  while (fn & 1) {
    fn >>= 1;
    sn >>= 1;
  }
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn & 1 || fn === sn) {
      fr = node(c, fr);
      sr = node(c, sr);
      if (!(fn & 1))
        while (!(fn & 1) && fn !== 0) {
          fn >>= 1;
          sn >>= 1;
        }
    } else sr = node(sr, c);
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 && fr.equals(r1) && sr.equals(r2);
}

type Submission = { old: number; proof: string[]; size: number };
type Mode = 'witness' | 'garbage' | 'stranger' | 'huge' | 'error500' | 'otherlog' | 'otherkey' | 'forked';

/** A tlog-witness for one log, from the spec: the log's Ed25519 key, the latest cosigned (size, root), atomic. */
class SpecWitness {
  readonly name = 'witness.spec.test/w1';
  readonly keys = generateKeyPairSync('ed25519');
  readonly seen: Submission[] = [];
  latest: { size: number; root: Buffer } | null = null;
  mode: Mode = 'witness';
  private server!: http.Server;
  url = '';

  constructor(private readonly logVkey: string) {}

  get vkey(): string {
    const pub = rawPublic(this.keys.publicKey);
    return `${this.name}+${keyId(this.name, 4, pub).toString('hex')}+${Buffer.concat([Buffer.from([4]), pub]).toString('base64')}`;
  }

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        let answer: [number, string, string];
        try {
          answer =
            req.method === 'POST' && req.url === '/add-checkpoint' ? this.add(Buffer.concat(chunks).toString('utf8')) : [404, 'text/plain', 'no\n'];
        } catch (err) {
          answer = [400, 'text/plain', `${(err as Error).message}\n`];
        }
        res.writeHead(answer[0], { 'content-type': answer[1] }).end(answer[2]);
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }

  private add(body: string): [number, string, string] {
    const lines = body.split('\n');
    const oldLine = /^old (0|[1-9][0-9]*)$/.exec(lines[0]);
    const blank = lines.indexOf('', 1);
    if (!oldLine || blank < 0) return [400, 'text/plain', 'bad request\n'];
    const old = Number(oldLine[1]);
    const proof = lines.slice(1, blank);
    const note = lines.slice(blank + 1).join('\n');
    const split = note.lastIndexOf('\n\n');
    const text = note.slice(0, split + 1);
    const [origin, sizeText, rootText] = text.split('\n');
    const size = Number(sizeText);
    const root = Buffer.from(rootText, 'base64');
    this.seen.push({ old, proof, size });
    // A witness that saw another log of this origin (a fork): it holds this very size with another root.
    if (this.mode === 'forked') this.latest = { size, root: Buffer.alloc(32, 3) };
    if (this.mode === 'error500') return [500, 'text/plain', 'the witness is down for maintenance\n'];
    if (this.mode === 'huge') return [200, 'text/plain', `${EM}x ${'A'.repeat(200_000)}\n`];
    if (this.mode === 'garbage') return [200, 'text/plain', 'cosigned, trust me\n'];
    // signed-note: the log's signature line must verify under the log's key (others ignored).
    // <name>+<8 hex>+<base64 key> (the base64 may hold '+' itself)
    const plus = this.logVkey.indexOf('+');
    const [logName, logHash, logKey] = [this.logVkey.slice(0, plus), this.logVkey.slice(plus + 1, plus + 9), this.logVkey.slice(plus + 10)];
    if (origin !== logName || this.mode === 'otherlog') return [404, 'text/plain', 'unknown log\n'];
    const logPub = createPublicKey({
      key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(logKey, 'base64').subarray(1)]),
      format: 'der',
      type: 'spki',
    });
    const signed = note
      .slice(split + 2)
      .split('\n')
      .filter((l) => l.startsWith(`${EM}${logName} `))
      .some((l) => {
        const raw = Buffer.from(l.slice(EM.length + logName.length + 1), 'base64');
        return raw.subarray(0, 4).toString('hex') === logHash && this.mode !== 'otherkey' && verify(null, Buffer.from(text), logPub, raw.subarray(4));
      });
    if (!signed) return [403, 'text/plain', 'not signed by a key I trust\n'];
    if (old > size) return [400, 'text/plain', 'old is past the checkpoint\n'];
    const have = this.latest?.size ?? 0;
    if (old !== have) return [409, 'text/x.tlog.size', `${have}\n`];
    if (old === size && this.latest && !this.latest.root.equals(root)) return [409, 'text/plain', 'same size, another root\n'];
    if (
      old > 0 &&
      old < size &&
      !consistent(
        old,
        size,
        this.latest!.root,
        root,
        proof.map((h) => Buffer.from(h, 'base64')),
      )
    )
      return [422, 'text/plain', 'the consistency proof does not verify\n'];
    this.latest = { size, root };
    const time = 1_790_000_000 + this.seen.length;
    const ts = Buffer.alloc(8);
    ts.writeBigUInt64BE(BigInt(time));
    const signer = this.mode === 'stranger' ? generateKeyPairSync('ed25519').privateKey : this.keys.privateKey;
    const sig = sign(null, Buffer.from(`cosignature/v1\ntime ${time}\n${text}`), signer);
    const id = keyId(this.name, 4, rawPublic(this.keys.publicKey));
    return [200, 'text/plain', `${EM}${this.name} ${Buffer.concat([id, ts, sig]).toString('base64')}\n`];
  }
}

type View = {
  witnesses: Array<{
    name: string;
    cosigned: { size: number; line: string } | null;
    refusal: { reason: string; size: number } | null;
    push: { url: string; state: string; message: string | null; next_at: number | null; failures: number } | null;
  }>;
};

describe('the relay submits its checkpoints to tlog-witness witnesses (RELAY_WITNESS_URLS)', () => {
  let relay: TestRelay;
  let w: SpecWitness;
  let logVkey: string;
  const view = async () => ((await (await fetch(`${relay.url}/log/witnesses`, { headers: relay.op })).json()) as View).witnesses[0];
  const checkpointSize = async () => Number((await (await fetch(`${relay.url}/log/checkpoint`)).text()).split('\n')[1]);
  const settled = () => relay.app.get(WitnessPushService).settled();
  /** A tick on the relay's clock (the harness's relay sweeps only when its manual clock moves). */
  const tick = (seconds: number) => {
    relay.clock.advanceSeconds(seconds);
    return relay.app.get(Scheduler).sweep();
  };
  /** A new event, then time past the publish interval (and any wait after a failure): the tick submits; resolves once answered. */
  async function grow(): Promise<void> {
    const before = w.seen.length;
    (await pairPhone(relay)).phone.close();
    await relay.loop.drain();
    await tick(15 * 60);
    await waitFor('a submission', async () => w.seen.length > before, 10_000);
    await settled();
  }

  beforeAll(async () => {
    const probe = await startRelay();
    await probe.close();
    // The log's verifier key is the home's checkpoint key: make the home, read its vkey, then start the relay with the witness.
    logVkey = (await svc(['relay', 'events', 'vkey'], { SVC_HOME: probe.home })).stdout.trim();
    w = new SpecWitness(logVkey);
    await w.start();
    relay = await startRelay({ home: probe.home, env: { RELAY_WITNESS_VKEYS: w.vkey, RELAY_WITNESS_URLS: `${w.name}=${w.url}/` } });
  });
  afterAll(async () => {
    await relay?.close();
    await w?.close();
  });

  it('submits the published checkpoint (old 0, no proof); the cosignature it answers is kept and served on GET /log/checkpoint', async () => {
    await grow();
    expect(w.seen[0]).toMatchObject({ old: 0, proof: [] });
    const v = await view();
    expect(v.push).toMatchObject({ url: w.url, state: 'ok', message: null, failures: 0 });
    expect(v.cosigned?.size).toBe(w.latest!.size);
    const note = await (await fetch(`${relay.url}/log/checkpoint`)).text();
    expect(note).toContain(v.cosigned!.line);
    // Verified here from the tlog-cosignature spec: the 8-byte time, then Ed25519 over "cosignature/v1\ntime T\n" + the checkpoint text.
    const raw = Buffer.from(v.cosigned!.line.trim().split(' ')[2], 'base64');
    const text = note.slice(0, note.indexOf('\n\n') + 1);
    expect(verify(null, Buffer.from(`cosignature/v1\ntime ${raw.readBigUInt64BE(4)}\n${text}`), w.keys.publicKey, raw.subarray(12))).toBe(true);
  });

  it('a grown log is submitted with old = the size the witness cosigned and a consistency proof it checks', async () => {
    const first = w.latest!.size;
    await grow();
    const last = w.seen[w.seen.length - 1];
    expect(last).toMatchObject({ old: first, size: await checkpointSize() });
    expect(last.proof.length).toBeGreaterThan(0);
    expect((await view()).push?.state).toBe('ok');
    expect(w.latest!.size).toBe(last.size);
  });

  it('a witness that cosigned less than the relay thinks (409 with its size) is brought forward from its size at once', async () => {
    const kept = w.latest!;
    await grow();
    // The witness was restored from a backup: its latest is the older tree.
    w.latest = kept;
    await grow();
    const [a, b] = w.seen.slice(-2);
    expect(a.old).toBeGreaterThan(kept.size);
    expect(b).toMatchObject({ old: kept.size, size: a.size });
    expect((await view()).push?.state).toBe('ok');
  });

  it('a witness that cosigned a larger tree (the log rewound) is a refusal, kept and shown; the relay waits before it submits again', async () => {
    w.latest = { size: 1_000_000, root: Buffer.alloc(32, 7) };
    await grow();
    const v = await view();
    expect(v.refusal?.reason).toMatch(/cosigned a tree of 1000000 records .* rewound or truncated/);
    expect(v.push).toMatchObject({ state: 'refused', failures: 1 });
    // An operator alerts on it: the counter of refusals by witness and way.
    const metrics = await (await fetch(`${relay.url}/metrics`, { headers: relay.op })).text();
    expect(metrics).toMatch(/svc_witness_answers_total\{witness="witness\.spec\.test\/w1",way="push",outcome="refused"\} 1\n/);
    expect(metrics).toMatch(/svc_witness_answers_total\{witness="witness\.spec\.test\/w1",way="push",outcome="cosigned"\} [1-9]/);
    const n = w.seen.length;
    await tick(5);
    await settled();
    expect(w.seen.length).toBe(n);
    await tick(6);
    await waitFor('the submission after the wait', async () => w.seen.length > n, 10_000);
    await settled();
  });

  it('a proof the witness cannot check (the log rewritten since) is a refusal (422); at the same size another root is one (409)', async () => {
    const size = await checkpointSize();
    w.latest = { size: size - 1, root: Buffer.alloc(32, 9) };
    await grow();
    expect((await view()).refusal?.reason).toMatch(/did not verify .* rewritten, or rewound and regrown/);
    expect((await view()).push?.state).toBe('refused');
    // A witness that holds the submitted size with another root: 409 (not a size) on the retry from that size.
    w.mode = 'forked';
    const n = w.seen.length;
    await grow();
    const [first, retry] = w.seen.slice(n);
    expect(retry).toMatchObject({ old: first.size, size: first.size, proof: [] });
    expect((await view()).refusal?.reason).toMatch(new RegExp(`another tree of ${first.size} records of this log: rewritten`));
    w.mode = 'witness';
  });

  it('a witness that does not know the log, is down, answers garbage, another key or too much: an error with what to do, never a cosignature', async () => {
    const cases: Array<[Mode, RegExp]> = [
      ['otherlog', /the witness does not know this log \(svc-relay\/[0-9a-f]+\): its operator adds the log's verifier key/],
      ['otherkey', /the witness does not trust the key that signed this checkpoint/],
      ['error500', /HTTP 500: the witness is down for maintenance/],
      ['garbage', /not signature lines/],
      ['stranger', /bad cosignature by witness\.spec\.test\/w1/],
      ['huge', /more than 65536 bytes/],
    ];
    for (const [mode, message] of cases) {
      w.mode = mode;
      w.latest = null;
      await grow();
      const v = await view();
      expect(v.push?.message ?? '').toMatch(message);
      expect(v.push?.state).toBe('error');
    }
    w.mode = 'witness';
    await w.close();
    await tick(15 * 60);
    await settled();
    expect((await view()).push?.message).toMatch(/did not answer: ECONNREFUSED/);
  });
});

describe('RELAY_WITNESS_URLS is checked at start', () => {
  it('a name without a verifier key, a bad URL or a name twice stops the relay with what is wrong', async () => {
    const k = generateKeyPairSync('ed25519');
    const pub = rawPublic(k.publicKey);
    const vkey = `w.test/a+${keyId('w.test/a', 4, pub).toString('hex')}+${Buffer.concat([Buffer.from([4]), pub]).toString('base64')}`;
    await expect(startRelay({ env: { RELAY_WITNESS_VKEYS: vkey, RELAY_WITNESS_URLS: 'w.test/b=http://127.0.0.1:1' } })).rejects.toThrow(
      /RELAY_WITNESS_URLS: w.test\/b has no verifier key in RELAY_WITNESS_VKEYS/,
    );
    await expect(startRelay({ env: { RELAY_WITNESS_VKEYS: vkey, RELAY_WITNESS_URLS: 'w.test/a' } })).rejects.toThrow(
      /is not <witness name>=<http\(s\) URL>/,
    );
    await expect(
      startRelay({ env: { RELAY_WITNESS_VKEYS: vkey, RELAY_WITNESS_URLS: 'w.test/a=http://127.0.0.1:1,w.test/a=http://127.0.0.1:2' } }),
    ).rejects.toThrow(/listed twice/);
  });
});

describe('the relay submits to `svc relay witness --listen` (the CLI witness, its own process and home)', () => {
  let relay: TestRelay;
  let witness: SvcProcess;
  const home = tempHome();
  afterAll(async () => {
    if (witness?.child.exitCode === null) witness.child.kill('SIGKILL');
    await relay?.close();
  });

  it('cosigns each new checkpoint the relay sends; the served checkpoint verifies under both keys with `events verify`; a log rewound behind what the witness cosigned is a refusal on the relay (the witness answers 409 with its size)', async () => {
    ensureBuilt();
    let url: string;
    let logVkey: string;
    let wvkey: string;
    ({ relay, witness, url, logVkey, wvkey } = await relayWithListeningWitness(home, 'witness.cli.test/w1'));
    const view = async () => ((await (await fetch(`${relay.url}/log/witnesses`, { headers: relay.op })).json()) as View).witnesses[0];
    const round = async () => {
      await submitRound(relay);
      return view();
    };
    for (let i = 0; i < 2; i++) {
      const v = await round();
      expect(v.push).toMatchObject({ state: 'ok', message: null });
      const text = await (await fetch(`${relay.url}/log/checkpoint`)).text();
      expect(text).toContain(v.cosigned!.line);
      const file = path.join(tempHome(), 'cosigned.checkpoint');
      fs.writeFileSync(file, text);
      const check = await svc(['relay', 'events', 'verify', '--checkpoint', file, '--vkey', logVkey, '--vkey', wvkey], { SVC_HOME: relay.home });
      expect(check.code).toBe(0);
      expect(check.stdout).toMatch(/signed by svc-relay\/[0-9a-f]{16}, witness\.cli\.test\/w1 \(cosigned /);
    }
    // The witness's home says it cosigned a larger tree of this log than the log now has: the log went back.
    witness.child.kill('SIGTERM');
    await witness.exited;
    const state = JSON.parse(fs.readFileSync(path.join(home, 'state.json'), 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(path.join(home, 'state.json'), JSON.stringify({ ...state, size: 1_000_000 }));
    witness = spawnSvc(['relay', 'witness', '--home', home, '--listen', url.replace('http://', '')], { NO_COLOR: '1' });
    await waitFor('the witness to listen again', async () => witness.stdout().includes('listening on'), 30_000);
    const v = await round();
    expect(v.push?.state).toBe('refused');
    expect(v.refusal?.reason).toMatch(/cosigned a tree of 1000000 records of this log; it now has \d+: rewound or truncated/);
    expect(relay.logs.join('')).toContain('A WITNESS REFUSED');
  });
});
