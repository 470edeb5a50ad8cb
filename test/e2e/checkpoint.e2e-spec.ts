import { encodeRecord, GENESIS_HASH, type StoredEvent } from '@svc/events';
import { checkpointMessage, type Checkpoint } from '@svc/events/checkpoint';
import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pairPhone, startRelay, tempHome, type TestRelay } from '../support/harness';
import { svc } from '../support/cli';

/** Signed checkpoints over real logs: the CLI in-process against a real relay's files. */

const eventsOf = (home: string) => path.join(home, 'relay', 'events');

/** A copy of a log directory, every record rewritten by `edit` and the whole chain re-encoded so that it verifies again. */
function rewriteAndRechain(dir: string, edit: (e: StoredEvent) => StoredEvent | null): void {
  let prev = GENESIS_HASH;
  let seq = 0;
  for (const file of fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort()) {
    const out: string[] = [];
    for (const text of fs.readFileSync(path.join(dir, file), 'utf8').split('\n').filter(Boolean)) {
      const e = edit(JSON.parse(text) as StoredEvent);
      if (e === null) continue;
      const { line, hash } = encodeRecord({ seq: ++seq, id: e.id, at: e.at, type: e.type, actor: e.actor, data: e.data, v: e.v, prev });
      out.push(line);
      prev = hash;
    }
    fs.writeFileSync(path.join(dir, file), out.map((l) => l + '\n').join(''));
  }
}

function copyLog(from: string): string {
  const to = path.join(tempHome(), 'events');
  fs.cpSync(from, to, { recursive: true });
  return to;
}

describe('svc relay events public-key and checkpoint', () => {
  let relay: TestRelay;
  let env: NodeJS.ProcessEnv;
  let publicKey: string;
  let cp: Checkpoint;
  beforeAll(async () => {
    relay = await startRelay();
    env = { SVC_HOME: relay.home };
    await pairPhone(relay).then((p) => p.phone.close());
    while (relay.loop.models.connections.count() > 0) await new Promise((r) => setTimeout(r, 10));
    await relay.loop.drain();
  });
  afterAll(() => relay?.close());

  it('makes the key once under the home (0600) and prints its public half as base64 of 32 bytes with its key id', async () => {
    const first = await svc(['relay', 'events', 'public-key', '--json'], env);
    expect(first.code).toBe(0);
    const j = JSON.parse(first.stdout) as { algorithm: string; public_key: string; key_id: string; created: boolean };
    expect(j).toMatchObject({ algorithm: 'ed25519', created: true });
    expect(Buffer.from(j.public_key, 'base64')).toHaveLength(32);
    expect(j.key_id).toMatch(/^[0-9a-f]{16}$/);
    const file = path.join(relay.home, 'relay', 'checkpoint-key.pem');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const again = await svc(['relay', 'events', 'public-key'], env);
    expect(again).toMatchObject({ code: 0, stderr: '' });
    expect(again.stdout).toBe(`public key  ${j.public_key}\nkey id      ${j.key_id}\n`);
    // The private key is in no event and no log line.
    const pem = fs.readFileSync(file, 'utf8');
    const body = pem.split('\n')[1];
    for (const f of fs.readdirSync(eventsOf(relay.home))) expect(fs.readFileSync(path.join(eventsOf(relay.home), f), 'utf8')).not.toContain(body);
    expect(first.stdout + again.stdout).not.toContain(body);
    publicKey = j.public_key;
  });

  it('signs the head of the log a running relay is writing, with a signature that checks under the public key', async () => {
    const r = await svc(['relay', 'events', 'checkpoint', '--json-v1'], env);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    cp = JSON.parse(r.stdout) as Checkpoint;
    expect(Object.keys(cp)).toEqual(['format', 'seq', 'hash', 'at', 'key_id', 'signature']);
    expect(cp).toMatchObject({ format: 'svc-relay-checkpoint/1', seq: relay.loop.lastSeq, hash: relay.loop.lastHash });
    // Checked here with node:crypto alone, as an auditor's own tool would.
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey, 'base64').toString('base64url') }, format: 'jwk' });
    expect(verify(null, checkpointMessage(cp), key, Buffer.from(cp.signature, 'base64'))).toBe(true);
  });

  it('--out writes the file (0644) and says what it signed', async () => {
    const out = path.join(tempHome(), 'cp.json');
    const r = await svc(['relay', 'events', 'checkpoint', '--json-v1', '--out', out], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`checkpoint of seq ${relay.loop.lastSeq}`);
    expect(fs.statSync(out).mode & 0o777).toBe(0o644);
    expect(JSON.parse(fs.readFileSync(out, 'utf8'))).toMatchObject({ seq: relay.loop.lastSeq, hash: relay.loop.lastHash });
  });

  it('verify --checkpoint passes when the log extends the checkpoint, and says by how much', async () => {
    const file = path.join(tempHome(), 'cp.json');
    fs.writeFileSync(file, JSON.stringify(cp));
    const now = await svc(['relay', 'events', 'verify', '--checkpoint', file, '--public-key', publicKey], env);
    expect(now.code).toBe(0);
    expect(now.stdout).toContain('extends it by 0 records');

    await pairPhone(relay).then((p) => p.phone.close());
    while (relay.loop.models.connections.count() > 0) await new Promise((r) => setTimeout(r, 10));
    await relay.loop.drain();
    const later = await svc(['relay', 'events', 'verify', '--checkpoint', file, '--public-key', publicKey, '--json'], env);
    expect(later.code).toBe(0);
    const j = JSON.parse(later.stdout) as { ok: boolean; checkpoint: { ok: boolean; extended_by: number; key_source: string } };
    expect(j).toMatchObject({ ok: true, checkpoint: { ok: true, key_source: 'given', extended_by: relay.loop.lastSeq - cp.seq } });
    expect(j.checkpoint.extended_by).toBeGreaterThan(3);
  });

  it("without --public-key it judges by the home's key and says an auditor should pass their own", async () => {
    const file = path.join(tempHome(), 'cp.json');
    fs.writeFileSync(file, JSON.stringify(cp));
    const r = await svc(['relay', 'events', 'verify', '--checkpoint', file], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("the home's own key; an auditor should pass their own copy of the public key with --public-key");
    // A key file (the printed key, or a PEM) works as well as the text.
    const keyFile = path.join(tempHome(), 'relay.pub');
    fs.writeFileSync(keyFile, publicKey + '\n');
    expect((await svc(['relay', 'events', 'verify', '--checkpoint', file, '--public-key', keyFile], env)).code).toBe(0);
  });

  it('a history rewritten before the checkpoint and re-chained verifies as a chain, and fails the checkpoint naming the seq and both hashes', async () => {
    const copy = copyLog(eventsOf(relay.home));
    // Someone who controls the host changes the actor of record 2 and recomputes every hash after it.
    rewriteAndRechain(copy, (e) => (e.seq === 2 ? { ...e, actor: `${e.actor}-rewritten` } : e));
    expect((await svc(['relay', 'events', 'verify', '--log', copy])).code).toBe(0);
    const segment = fs.readdirSync(copy).filter((f) => f.endsWith('.jsonl'))[0];
    const newHash = (JSON.parse(fs.readFileSync(path.join(copy, segment), 'utf8').split('\n')[cp.seq - 1]) as StoredEvent).hash;
    expect(newHash).not.toBe(cp.hash);

    const file = path.join(tempHome(), 'cp.json');
    fs.writeFileSync(file, JSON.stringify(cp));
    const r = await svc(['relay', 'events', 'verify', '--log', copy, '--checkpoint', file, '--public-key', publicKey], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `record at seq ${cp.seq} has hash ${newHash} where the checkpoint says ${cp.hash}: the history was rewritten at or before seq ${cp.seq}`,
    );
    const j = await svc(['relay', 'events', 'verify', '--log', copy, '--checkpoint', file, '--public-key', publicKey, '--json'], env);
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout)).toMatchObject({ ok: true, checkpoint: { ok: false, problems: [{ code: 'rewritten' }] } });
  });

  it('a rewrite after the checkpoint leaves it standing (only later records changed)', async () => {
    const copy = copyLog(eventsOf(relay.home));
    rewriteAndRechain(copy, (e) => (e.seq === cp.seq + 2 ? { ...e, actor: `${e.actor}-rewritten` } : e));
    const file = path.join(tempHome(), 'cp.json');
    fs.writeFileSync(file, JSON.stringify(cp));
    expect((await svc(['relay', 'events', 'verify', '--log', copy, '--checkpoint', file, '--public-key', publicKey], env)).code).toBe(0);
  });

  it('a log cut short before the checkpoint fails as truncated, even when what is left verifies', async () => {
    const copy = copyLog(eventsOf(relay.home));
    rewriteAndRechain(copy, (e) => (e.seq >= cp.seq - 1 ? null : e));
    expect((await svc(['relay', 'events', 'verify', '--log', copy])).code).toBe(0);
    const file = path.join(tempHome(), 'cp.json');
    fs.writeFileSync(file, JSON.stringify(cp));
    const r = await svc(['relay', 'events', 'verify', '--log', copy, '--checkpoint', file, '--public-key', publicKey], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`log shorter than the checkpoint: it ends at seq ${cp.seq - 2}, the checkpoint is of seq ${cp.seq}`);
  });

  it('an edited checkpoint fails its signature; another key is named as an unknown key id', async () => {
    const file = path.join(tempHome(), 'cp.json');
    fs.writeFileSync(file, JSON.stringify({ ...cp, at: '2026-01-01T00:00:00.000Z' }));
    const bad = await svc(['relay', 'events', 'verify', '--checkpoint', file, '--public-key', publicKey], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('bad signature');

    fs.writeFileSync(file, JSON.stringify(cp));
    const other = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
    // A PEM starts with dashes: given inline as --public-key=PEM, or (as an auditor would) in a file.
    const unknown = await svc(['relay', 'events', 'verify', '--checkpoint', file, `--public-key=${other}`], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(`unknown key id: the checkpoint was signed by key ${cp.key_id}`);
    const pemFile = path.join(tempHome(), 'other.pem');
    fs.writeFileSync(pemFile, other);
    expect((await svc(['relay', 'events', 'verify', '--checkpoint', file, '--public-key', pemFile], env)).stderr).toContain('unknown key id');
  });

  it.each<[string, string | Buffer, RegExp]>([
    ['a huge file', Buffer.alloc(5 * 1024 * 1024, 0x7b), /malformed checkpoint: 5242880 bytes/],
    ['not JSON', 'hello', /malformed checkpoint: not JSON/],
    ['an extra field', '{"format":"svc-relay-checkpoint/1","extra":1}', /malformed checkpoint: unknown field "extra"/],
  ])('%s is a malformed checkpoint (exit 1, before the log is read)', async (_what, content, reason) => {
    const file = path.join(tempHome(), 'cp.json');
    fs.writeFileSync(file, content);
    const r = await svc(['relay', 'events', 'verify', '--checkpoint', file, '--public-key', publicKey], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(reason);
    expect(r.stdout).toBe('');
  });

  it('refuses a bad public key, a missing file, and --public-key alone', async () => {
    const file = path.join(tempHome(), 'cp.json');
    fs.writeFileSync(file, JSON.stringify(cp));
    const badKey = await svc(['relay', 'events', 'verify', '--checkpoint', file, '--public-key', 'abc'], env);
    expect(badKey).toMatchObject({ code: 1, stderr: expect.stringContaining('--public-key: not a public key') });
    const missing = await svc(['relay', 'events', 'verify', '--checkpoint', path.join(tempHome(), 'none.json')], env);
    expect(missing).toMatchObject({ code: 1, stderr: expect.stringContaining('no such file') });
    const alone = await svc(['relay', 'events', 'verify', '--public-key', publicKey], env);
    expect(alone.code).toBe(2);
    expect(alone.stderr.trimEnd().split('\n').at(-1)).toBe('svc: --public-key goes with --checkpoint FILE');
  });
});

describe('the help says what a checkpoint is', () => {
  it('names the signed bytes, the public key form, and that an auditor passes their own key', async () => {
    const cp = await svc(['relay', 'events', 'checkpoint', '--help']);
    expect(cp.stdout).toContain('"svc-relay-checkpoint/1\\n<seq>\\n<hash>\\n<at>\\n<key_id>\\n"');
    expect((await svc(['relay', 'events', 'public-key', '--help'])).stdout).toContain('base64 of its raw 32 bytes (Ed25519)');
    expect((await svc(['relay', 'events', 'verify', '--help'])).stdout).toMatch(/default: the home's own key; an auditor passes their\s+own copy/);
  });
});

describe('checkpoints of an empty or missing log, and a home without a key', () => {
  it('an empty log is not signed, with a clear error', async () => {
    const home = tempHome();
    fs.mkdirSync(eventsOf(home), { recursive: true });
    const r = await svc(['relay', 'events', 'checkpoint'], { SVC_HOME: home });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('is empty: there is no record to sign yet');
    const empty = path.join(home, 'empty.jsonl');
    fs.writeFileSync(empty, '');
    expect((await svc(['relay', 'events', 'checkpoint', '--log', empty], { SVC_HOME: home })).stderr).toContain('is empty');
  });

  it('a broken log is not signed', async () => {
    const relay = await startRelay();
    await relay.close();
    const dir = eventsOf(relay.home);
    const file = path.join(dir, fs.readdirSync(dir)[0]);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('"actor":"', '"actor":"x'));
    const r = await svc(['relay', 'events', 'checkpoint'], { SVC_HOME: relay.home });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('event log broken at seq 1');
    expect(r.stdout).toBe('');
  });

  it('verify --checkpoint without --public-key on a home with no key asks for one', async () => {
    const relay = await startRelay();
    await relay.close();
    const file = path.join(tempHome(), 'cp.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        format: 'svc-relay-checkpoint/1',
        seq: 1,
        hash: 'a'.repeat(64),
        at: '2026-03-01T12:00:00.000Z',
        key_id: 'b'.repeat(16),
        signature: Buffer.alloc(64).toString('base64'),
      }),
    );
    const r = await svc(['relay', 'events', 'verify', '--checkpoint', file], { SVC_HOME: relay.home });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no checkpoint key under');
    expect(fs.existsSync(path.join(relay.home, 'relay', 'checkpoint-key.pem'))).toBe(false);
  });
});
