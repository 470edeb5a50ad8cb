import { encodeRecord, GENESIS_HASH, type StoredEvent } from '@svc/events';
import { checkNote, parseCheckpointText, parseNote, parseVkey } from '@svc/events/merkle/note';
import { leafHash } from '@svc/events/merkle/tree';
import { verifyInclusion } from '@svc/events/merkle/verify';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pairPhone, startRelay, tempHome, type TestRelay } from '../support/harness';
import { svc } from '../support/cli';

/**
 * The transparency log over real HTTP and a witness with its own home: GET /log/checkpoint, the proof
 * routes and their refusals, cosignatures kept and appended, and the witness refusing a relay whose log
 * was rewritten, truncated, or rewound and regrown behind its back (the relay restarted on the edited home).
 */

const eventsDir = (home: string) => path.join(home, 'relay', 'events');

/** Replaces the relay's log (one segment) with `edit` of the kept copy, re-chained, and drops its snapshots. */
function plant(home: string, keptDir: string, edit: (rs: StoredEvent[]) => StoredEvent[]): void {
  const file = fs.readdirSync(keptDir).filter((f) => f.endsWith('.jsonl'))[0];
  const records = fs
    .readFileSync(path.join(keptDir, file), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as StoredEvent);
  let prev = GENESIS_HASH;
  const out = edit(records).map((e, i) => {
    const r = encodeRecord({ seq: i + 1, id: e.id, at: e.at, type: e.type, actor: e.actor, data: e.data, v: e.v, prev });
    prev = r.hash;
    return r.line + '\n';
  });
  fs.rmSync(eventsDir(home), { recursive: true });
  fs.mkdirSync(eventsDir(home));
  fs.writeFileSync(path.join(eventsDir(home), file), out.join(''));
  fs.rmSync(path.join(home, 'relay', 'snapshots'), { recursive: true, force: true });
}

async function settle(relay: TestRelay): Promise<void> {
  while (relay.loop.models.connections.count() > 0) await new Promise((r) => setTimeout(r, 10));
  await relay.loop.drain();
}

describe('the transparency log over HTTP, and a witness off the host', () => {
  const witnessHome = tempHome();
  let wvkey: string;
  let logVkey: string;
  let relay: TestRelay;
  let home: string;
  const witness = (extra: string[] = []) => svc(['relay', 'witness', '--home', witnessHome, '--relay', relay.url, '--json', ...extra]);

  beforeAll(async () => {
    wvkey = (await svc(['relay', 'witness', '--home', witnessHome, '--name', 'witness.test/w1', '--print-vkey'])).stdout.trim();
    relay = await startRelay({ env: { RELAY_WITNESS_VKEYS: wvkey } });
    home = relay.home;
    await pairPhone(relay).then((p) => p.phone.close());
    await settle(relay);
    logVkey = (await svc(['relay', 'events', 'vkey'], { SVC_HOME: home })).stdout.trim();
  });
  afterAll(() => relay?.close());

  it('serves the newest checkpoint publicly, signed by the log key, of the whole log', async () => {
    const res = await fetch(`${relay.url}/log/checkpoint`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const note = parseNote(await res.text());
    expect(checkNote(note, [parseVkey(logVkey)]).map((s) => s.name)).toEqual([logVkey.split('+')[0]]);
    expect(parseCheckpointText(note.text).size).toBe(relay.loop.lastSeq);
  });

  it('answers proofs with bounded, validated parameters; inclusion only with the operator key', async () => {
    const size = relay.loop.lastSeq;
    for (const q of ['from=0&to=2', 'from=x&to=2', 'from=1', `from=2&to=${size + 1}`, 'from=1&to=1234567890123456']) {
      const r = await fetch(`${relay.url}/log/proof/consistency?${q}`);
      expect(r.status).toBe(400);
      expect(await r.json()).toMatchObject({ ok: false });
    }
    expect((await fetch(`${relay.url}/log/proof/inclusion?seq=1`)).status).toBe(401);
    const r = await fetch(`${relay.url}/log/proof/inclusion?seq=2&size=${size}`, { headers: relay.op });
    expect(r.status).toBe(200);
    const p = (await r.json()) as { leaf_hash: string; inclusion: string[]; tree_size: number; record: string };
    const root = Buffer.from(parseCheckpointText(parseNote(await (await fetch(`${relay.url}/log/checkpoint`)).text()).text).root);
    const record = fs
      .readFileSync(path.join(eventsDir(home), fs.readdirSync(eventsDir(home)).filter((f) => f.endsWith('.jsonl'))[0]), 'utf8')
      .split('\n')[1];
    expect(Buffer.from(p.leaf_hash, 'base64').equals(leafHash(record))).toBe(true);
    // The record as stored, as `svc relay events proof` prints it (the route is the operator key's only).
    expect(p.record).toBe(record);
    const cli = JSON.parse((await svc(['relay', 'events', 'proof', '--seq', '2', '--size', String(size)], { SVC_HOME: home })).stdout) as {
      record: string;
    };
    expect(p.record).toBe(cli.record);
    expect(
      verifyInclusion(
        1,
        size,
        leafHash(record),
        p.inclusion.map((h) => Buffer.from(h, 'base64')),
        root,
      ),
    ).toBe(true);
  });

  it('the witness cosigns; the relay keeps the cosignature and appends it to the checkpoint; verify names both signers', async () => {
    const r = await witness(['--log-vkey', logVkey]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, submitted: true, previous: null, cosigned: { size: relay.loop.lastSeq } });
    const text = await (await fetch(`${relay.url}/log/checkpoint`)).text();
    const signers = checkNote(parseNote(text), [parseVkey(logVkey), parseVkey(wvkey)]);
    expect(signers.map((s) => [s.name, s.type])).toEqual([
      [logVkey.split('+')[0], 1],
      ['witness.test/w1', 4],
    ]);
    const file = path.join(tempHome(), 'cosigned.checkpoint');
    fs.writeFileSync(file, text);
    const v = await svc(['relay', 'events', 'verify', '--checkpoint', file, '--vkey', logVkey, '--vkey', wvkey], { SVC_HOME: home });
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/signed by svc-relay\/[0-9a-f]{16}, witness\.test\/w1 \(cosigned /);
    const metrics = await (await fetch(`${relay.url}/metrics`, { headers: relay.op })).text();
    expect(metrics).toMatch(/svc_witness_answers_total\{witness="witness\.test\/w1",way="pull",outcome="cosigned"\} 1\n/);
  });

  it('publishes a checkpoint that stays fixed for RELAY_CHECKPOINT_PUBLISH_SECONDS, with the cosignatures of it', async () => {
    const first = parseCheckpointText(parseNote(await (await fetch(`${relay.url}/log/checkpoint`)).text()).text).size;
    // The relay grows; within the interval the published checkpoint (and its cosignature) stays.
    await pairPhone(relay).then((p) => p.phone.close());
    await settle(relay);
    expect(relay.loop.lastSeq).toBeGreaterThan(first);
    const signedBy = async () => {
      const note = parseNote(await (await fetch(`${relay.url}/log/checkpoint`)).text());
      return { size: parseCheckpointText(note.text).size, names: checkNote(note, [parseVkey(logVkey), parseVkey(wvkey)]).map((s) => s.name) };
    };
    relay.clock.advanceSeconds(9);
    expect(await signedBy()).toEqual({ size: first, names: [logVkey.split('+')[0], 'witness.test/w1'] });
    // The interval passed: a new checkpoint of the grown tree, not cosigned yet; the witness cosigns what it fetched.
    relay.clock.advanceSeconds(1);
    const grown = relay.loop.lastSeq;
    expect(await signedBy()).toEqual({ size: grown, names: [logVkey.split('+')[0]] });
    const again = await witness();
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: true, submitted: true, previous: { size: first }, cosigned: { size: grown } });
    expect(await signedBy()).toEqual({ size: grown, names: [logVkey.split('+')[0], 'witness.test/w1'] });
    const w = (await (await fetch(`${relay.url}/log/witnesses`, { headers: relay.op })).json()) as {
      witnesses: Array<{ cosigned: { size: number } }>;
    };
    expect(w.witnesses.map((x) => x.cosigned.size)).toEqual([grown]);
    // Not grown: advancing the clock alone signs nothing new.
    relay.clock.advanceSeconds(60);
    expect(await signedBy()).toEqual({ size: grown, names: [logVkey.split('+')[0], 'witness.test/w1'] });
  });

  it('takes cosignatures only from configured witnesses, and refuses malformed ones', async () => {
    const stranger = tempHome();
    await svc(['relay', 'witness', '--home', stranger, '--name', 'stranger.test/w', '--print-vkey']);
    const r = await svc(['relay', 'witness', '--home', stranger, '--relay', relay.url, '--log-vkey', logVkey, '--json']);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, submitted: false });
    for (const body of [{ size: 1, cosignature: 'garbage' }, { size: 'x', cosignature: '' }, {}]) {
      const res = await fetch(`${relay.url}/log/cosignature`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ ok: false });
    }
    expect(await (await fetch(`${relay.url}/log/checkpoint`)).text()).not.toContain('stranger.test');
  });

  it('refuses a rewritten, a truncated, and a rewound-then-regrown log, loudly, and the relay shows the refusal', async () => {
    await relay.close();
    const kept = path.join(tempHome(), 'events');
    fs.cpSync(eventsDir(home), kept, { recursive: true });
    const cosigned = (JSON.parse(fs.readFileSync(path.join(witnessHome, 'state.json'), 'utf8')) as { size: number }).size;
    const cases: Array<[string, (rs: StoredEvent[]) => StoredEvent[], string]> = [
      ['rewritten', (rs) => rs.map((e, i) => (i === 2 ? { ...e, actor: 'someone-else' } : e)), 'inconsistent'],
      ['truncated', (rs) => rs.slice(0, 3), 'rewound'],
      ['rewound and regrown', (rs) => [...rs.slice(0, 3), ...rs.slice(1)], 'inconsistent'],
    ];
    for (const [, edit, code] of cases) {
      plant(home, kept, edit);
      relay = await startRelay({ home, env: { RELAY_WITNESS_VKEYS: wvkey } });
      const r = await witness();
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('WITNESS REFUSED');
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code });
      // It still holds the tree it cosigned, and the relay kept its signed report.
      expect(JSON.parse(fs.readFileSync(path.join(witnessHome, 'state.json'), 'utf8'))).toMatchObject({ size: cosigned });
      const w = (await (await fetch(`${relay.url}/log/witnesses`, { headers: relay.op })).json()) as {
        witnesses: Array<{ refusal: { reason: string } | null }>;
      };
      expect(w.witnesses[0].refusal?.reason).toBe(JSON.parse(r.stdout).reason);
      await relay.close();
    }
    expect(fs.readFileSync(path.join(witnessHome, 'refusals.jsonl'), 'utf8').trim().split('\n')).toHaveLength(3);
    expect(fs.readFileSync(path.join(witnessHome, 'witness.prom'), 'utf8')).toContain('svc_witness_refusals_total 3');
    relay = await startRelay({ home: tempHome() });
  });
});
