import { encodeRecord, GENESIS_HASH, type StoredEvent } from '@svc/events';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pairPhone, startRelay, tempHome, type TestRelay } from '../support/harness';
import { svc } from '../support/cli';

/**
 * The transparency log through the CLI over a real relay's files: C2SP checkpoints, proofs, and two
 * verifiers nobody here wrote the crypto of (scripts/tlog-verify.mjs on node:crypto, and Python's
 * `cryptography`), then a kept checkpoint against a rewritten, a truncated and a rewound-then-regrown log.
 */

const eventsOf = (home: string) => path.join(home, 'relay', 'events');
const SCRIPT = path.join(__dirname, '..', '..', 'scripts', 'tlog-verify.mjs');

function lines(dir: string): { file: string; lines: string[] } {
  const file = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort()[0];
  return { file: path.join(dir, file), lines: fs.readFileSync(path.join(dir, file), 'utf8').split('\n').filter(Boolean) };
}

/** A copy of a one-segment log with its records replaced by `edit` and re-chained so that the chain verifies again. */
function rechained(from: string, edit: (records: StoredEvent[]) => StoredEvent[]): string {
  const to = path.join(tempHome(), 'events');
  fs.cpSync(from, to, { recursive: true });
  const seg = lines(to);
  let prev = GENESIS_HASH;
  const out = edit(seg.lines.map((l) => JSON.parse(l) as StoredEvent)).map((e, i) => {
    const r = encodeRecord({ seq: i + 1, id: e.id, at: e.at, type: e.type, actor: e.actor, data: e.data, v: e.v, prev });
    prev = r.hash;
    return r.line + '\n';
  });
  fs.writeFileSync(seg.file, out.join(''));
  return to;
}

const PY_CHECK = String.raw`
import base64, hashlib, json, sys
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
note, vkey, proof = open(sys.argv[1], encoding='utf-8').read(), sys.argv[2], json.load(open(sys.argv[3]))
name, keyid, key = vkey.split('+', 2)
raw = base64.b64decode(key)
assert raw[0] == 1 and hashlib.sha256(name.encode() + b'\n' + raw).digest()[:4].hex() == keyid, 'key id'
text, sigs = note.rsplit('\n\n', 1)
text += '\n'
for line in sigs.strip('\n').split('\n'):
    signer, b64 = line[2:].split(' ')
    sig = base64.b64decode(b64)
    if signer == name and sig[:4].hex() == keyid:
        Ed25519PublicKey.from_public_bytes(raw[1:]).verify(sig[4:], text.encode())  # raises when bad
        break
else:
    sys.exit('no signature by ' + name)
origin, size, root = text.split('\n')[:3]
size, root = int(size), base64.b64decode(root)
assert proof['tree_size'] == size
H = lambda *p: hashlib.sha256(b''.join(p)).digest()
fn, sn, r = proof['seq'] - 1, size - 1, H(b'\x00', proof['record'].encode())
for p in map(base64.b64decode, proof['inclusion']):
    assert sn != 0
    if fn & 1 or fn == sn:
        r = H(b'\x01', p, r)
        while not fn & 1 and fn != 0:
            fn, sn = fn >> 1, sn >> 1
    else:
        r = H(b'\x01', r, p)
    fn, sn = fn >> 1, sn >> 1
assert sn == 0 and r == root, 'inclusion'
print('python ok', origin, size)
`;

describe('svc relay events checkpoint, vkey and proof (C2SP / RFC 9162)', () => {
  let relay: TestRelay;
  let env: NodeJS.ProcessEnv;
  let vkey: string;
  let kept: string;
  let keptSize: number;
  const work = tempHome();
  beforeAll(async () => {
    relay = await startRelay();
    env = { SVC_HOME: relay.home };
    await pairPhone(relay).then((p) => p.phone.close());
    while (relay.loop.models.connections.count() > 0) await new Promise((r) => setTimeout(r, 10));
    await relay.loop.drain();
  });
  afterAll(() => relay?.close());

  it('prints the verifier key in signed-note form and signs a tlog-checkpoint of the whole log', async () => {
    const vk = await svc(['relay', 'events', 'vkey', '--json'], env);
    expect(vk.code).toBe(0);
    const j = JSON.parse(vk.stdout) as { vkey: string; origin: string; key_id: string };
    expect(j.origin).toBe(`svc-relay/${j.key_id}`);
    expect(j.vkey).toMatch(new RegExp(`^svc-relay/${j.key_id}\\+[0-9a-f]{8}\\+A[A-Za-z0-9+/]{43}$`));
    vkey = j.vkey;
    kept = path.join(work, 'kept.checkpoint');
    const r = await svc(['relay', 'events', 'checkpoint', '--out', kept], env);
    expect(r.code).toBe(0);
    const text = fs.readFileSync(kept, 'utf8');
    const [origin, size, root, blank, sig] = text.split('\n');
    keptSize = Number(size);
    expect([origin, size, blank]).toEqual([j.origin, String(relay.loop.lastSeq), '']);
    expect(Buffer.from(root, 'base64')).toHaveLength(32);
    expect(sig.startsWith(`\u2014 ${j.origin} `)).toBe(true);
    expect(Buffer.from(sig.split(' ')[2], 'base64')).toHaveLength(68);
    // The older JSON form stays behind a flag.
    const old = await svc(['relay', 'events', 'checkpoint', '--json-v1'], env);
    expect(JSON.parse(old.stdout)).toMatchObject({ format: 'svc-relay-checkpoint/1', seq: keptSize });
  });

  it('proves a record and the growth of the log; the outside script and Python check them against the checkpoint', async () => {
    const seq = Math.ceil(keptSize / 2);
    const incl = await svc(['relay', 'events', 'proof', '--seq', String(seq), '--size', String(keptSize)], env);
    expect(incl.code).toBe(0);
    const proof = JSON.parse(incl.stdout) as { seq: number; tree_size: number; leaf_hash: string; record: string; inclusion: string[] };
    expect(proof).toMatchObject({ seq, tree_size: keptSize });
    expect(proof.record).toBe(lines(eventsOf(relay.home)).lines[seq - 1]);
    const proofFile = path.join(work, 'incl.json');
    fs.writeFileSync(proofFile, incl.stdout);
    const node = spawnSync(process.execPath, [SCRIPT, 'inclusion', kept, vkey, proofFile], { encoding: 'utf8' });
    expect(node.stderr).toBe('');
    expect(node.stdout).toContain(`ok  the record of seq ${seq} is leaf ${seq - 1}`);
    const py = spawnSync('python3', ['-c', PY_CHECK, kept, vkey, proofFile], { encoding: 'utf8' });
    expect(py.stderr).toBe('');
    expect(py.stdout).toContain(`python ok svc-relay/`);
    // A record that is not the stored one is not in the tree.
    fs.writeFileSync(proofFile, JSON.stringify({ ...proof, record: proof.record.replace('"seq"', '"seq" ') }));
    expect(spawnSync(process.execPath, [SCRIPT, 'inclusion', kept, vkey, proofFile], { encoding: 'utf8' }).status).toBe(1);
    expect(spawnSync('python3', ['-c', PY_CHECK, kept, vkey, proofFile], { encoding: 'utf8' }).status).not.toBe(0);

    await pairPhone(relay).then((p) => p.phone.close());
    await relay.loop.drain();
    const newer = path.join(work, 'newer.checkpoint');
    expect((await svc(['relay', 'events', 'checkpoint', '--out', newer], env)).code).toBe(0);
    const to = Number(fs.readFileSync(newer, 'utf8').split('\n')[1]);
    expect(to).toBeGreaterThan(keptSize);
    const cons = await svc(['relay', 'events', 'proof', '--from', String(keptSize), '--to', String(to)], env);
    const consFile = path.join(work, 'cons.json');
    fs.writeFileSync(consFile, cons.stdout);
    const ok = spawnSync(process.execPath, [SCRIPT, 'consistency', kept, newer, vkey, consFile], { encoding: 'utf8' });
    expect(ok.stdout).toContain(`tree of ${to} extends its tree of ${keptSize}`);
    expect(spawnSync(process.execPath, [SCRIPT, 'checkpoint', newer, vkey], { encoding: 'utf8' }).stdout).toContain(`tree size ${to}`);
  });

  it('verify --checkpoint reads the note, names who signed, and says the log extends it', async () => {
    const r = await svc(['relay', 'events', 'verify', '--checkpoint', kept, '--vkey', vkey, '--json'], env);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout) as { checkpoint: { form: string; ok: boolean; signed_by: Array<{ name: string }>; extended_by: number } };
    expect(j.checkpoint).toMatchObject({ form: 'c2sp-note', ok: true });
    expect(j.checkpoint.signed_by.map((s) => s.name)).toEqual([vkey.split('+')[0]]);
    expect(j.checkpoint.extended_by).toBeGreaterThan(0);
    // An old JSON checkpoint still verifies, and the report says which form it read.
    const old = path.join(work, 'old.json');
    fs.writeFileSync(old, (await svc(['relay', 'events', 'checkpoint', '--json-v1'], env)).stdout);
    const oldV = await svc(['relay', 'events', 'verify', '--checkpoint', old], env);
    expect(oldV.code).toBe(0);
    expect(oldV.stdout).toContain('read a JSON checkpoint (svc-relay-checkpoint/1');
  });

  it('refuses the kept checkpoint against a rewritten, a truncated and a rewound-then-regrown log', async () => {
    const live = eventsOf(relay.home);
    const rewritten = rechained(live, (rs) => rs.map((e, i) => (i === 1 ? { ...e, actor: 'someone-else' } : e)));
    const truncated = rechained(live, (rs) => rs.slice(0, keptSize - 1));
    // Rewound to half the kept size, then grown again past it with other records: same size, other history.
    const regrown = rechained(live, (rs) => [...rs.slice(0, keptSize >> 1), ...rs.slice(0, rs.length - (keptSize >> 1))]);
    const cases: Array<[string, string, string]> = [
      ['rewritten', rewritten, 'rewritten'],
      ['truncated', truncated, 'truncated'],
      ['rewound and regrown', regrown, 'rewritten'],
    ];
    for (const [, log, code] of cases) {
      expect((await svc(['relay', 'events', 'verify', '--log', log], env)).code).toBe(0); // each chain alone verifies
      const r = await svc(['relay', 'events', 'verify', '--log', log, '--checkpoint', kept, '--vkey', vkey, '--json'], env);
      expect(r.code).toBe(1);
      const j = JSON.parse(r.stdout) as { checkpoint: { problems: Array<{ code: string }> } };
      expect(j.checkpoint.problems.map((p) => p.code)).toEqual([code]);
    }
  });

  it('refuses bad proof requests with a usage error', async () => {
    for (const args of [['--seq', '0'], ['--seq', 'x'], ['--seq', '1', '--from', '1'], ['--from', '2'], []]) {
      const r = await svc(['relay', 'events', 'proof', ...args], env);
      expect(r.code).toBe(2);
    }
    const far = await svc(['relay', 'events', 'proof', '--seq', '999999'], env);
    expect(far.code).toBe(1);
    expect(far.stderr).toContain('not in a tree of');
  });
});
