import { listSegments, PENDING_FILE } from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ManualClock } from '../../apps/relay/src/common/loop/clock';
import { svc } from '../support/cli';
import { nextCode, pairPhone, Phone, registerCode, startRelay, tempHome, type TestRelay } from '../support/harness';

/**
 * Retention with a verifiable cut (issue 37.4): whole segments before a cut go (or move to an archive),
 * the cut is recorded (log.pruned, a signed checkpoint), and every reader proves the log from the cut on.
 * Small segments (2 KiB) so a few dozen events make several; days pass on a manual clock.
 */
const DAY = 86_400;
const small = { segmentBytes: 2048 };
const eventsOf = (home: string) => path.join(home, 'relay', 'events');

/** The data of the newest log.pruned record of a home's live log. */
function lastCut(home: string): Record<string, unknown> {
  const lines = listSegments(eventsOf(home)).flatMap((s) => fs.readFileSync(path.join(eventsOf(home), s.file), 'utf8').split('\n'));
  return JSON.parse(lines.filter((l) => l.includes('"type":"log.pruned"')).at(-1)!).data;
}

/** A home with a paired phone and `days` days of pairing-code registrations, one day apart; the relay stopped. */
async function homeWithHistory(days: number): Promise<{ home: string; token: string; deviceId: string; clock: ManualClock }> {
  const clock = new ManualClock('2026-01-01T00:00:00.000Z');
  const relay = await startRelay({ clock, config: small, env: { PHONE_ENABLED: '1' } });
  const { phone, token, ok } = await pairPhone(relay, { terms: { ttl_seconds: 400 * DAY } });
  phone.close();
  for (let d = 0; d < days; d++) {
    for (let i = 0; i < 3; i++) expect((await registerCode(relay, nextCode())).status).toBe(200);
    clock.advanceSeconds(DAY);
  }
  await relay.close('history written');
  return { home: relay.home, token, deviceId: String((ok.payload as { device_id?: string }).device_id ?? ''), clock };
}

describe('svc relay events prune (a stopped relay)', () => {
  let h: Awaited<ReturnType<typeof homeWithHistory>>;
  let before: { sessions: unknown; lastSeq: number };
  const archive = () => path.join(h.home, 'archive');

  beforeAll(async () => {
    h = await homeWithHistory(12);
    const r = JSON.parse((await svc(['relay', 'events', 'replay', '--json', '--at', h.clock.now().toISOString()], { SVC_HOME: h.home })).stdout);
    before = { sessions: r.sessions, lastSeq: r.lastSeq };
  });

  it('refuses bad input in a sentence, and a dry run changes nothing', async () => {
    const bad = await svc(['relay', 'events', 'prune', '--before', 'last tuesday'], { SVC_HOME: h.home });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--before last tuesday: give a time like');
    expect(bad.stderr).not.toMatch(/\n\s+at /);
    const files = listSegments(eventsOf(h.home)).map((s) => s.file);
    const dry = await svc(['relay', 'events', 'prune', '--before', '2026-01-08T00:00:00Z'], { SVC_HOME: h.home });
    expect([dry.code, dry.stderr]).toEqual([0, '']);
    expect(dry.stdout).toMatch(/^would prune \d+ segments .* up to seq \d+ of 2026-01-0[67]/);
    expect(listSegments(eventsOf(h.home)).map((s) => s.file)).toEqual(files);
  });

  it('with --yes moves the segments before the cut to the archive, records the cut, and every reader proves the log from it', async () => {
    const run = await svc(['relay', 'events', 'prune', '--before', '2026-01-08T00:00:00Z', '--archive', archive(), '--yes', '--json'], {
      SVC_HOME: h.home,
    });
    expect([run.code, run.stderr]).toEqual([0, '']);
    const r = JSON.parse(run.stdout) as { cut: { seq: number; hash: string }; segments: string[]; recorded_at: number; checkpoint: string };
    expect(r.segments.length).toBeGreaterThan(1);
    const live = listSegments(eventsOf(h.home));
    expect(live[0].firstSeq).toBe(r.cut.seq + 1);
    expect(listSegments(archive()).map((s) => s.file)).toEqual(r.segments);
    // Recorded in the log, signed at the cut.
    expect(lastCut(h.home)).toMatchObject({ cutSeq: r.cut.seq, cutHash: r.cut.hash, by: 'operator' });
    expect(JSON.parse(fs.readFileSync(r.checkpoint, 'utf8'))).toMatchObject({ seq: r.cut.seq, hash: r.cut.hash });

    const verified = await svc(['relay', 'events', 'verify'], { SVC_HOME: h.home });
    expect([verified.code, verified.stderr]).toEqual([0, '']);
    expect(verified.stdout).toContain(`verified from seq ${r.cut.seq + 1} (cut at seq ${r.cut.seq}`);
    // Archive and log as one chain, from seq 1; the cut's checkpoint holds over it.
    const whole = await svc(['relay', 'events', 'verify', '--archive', archive(), '--json', '--checkpoint', r.checkpoint], { SVC_HOME: h.home });
    expect([whole.code, whole.stderr, whole.stdout]).toEqual([0, '', expect.any(String)]);
    expect(JSON.parse(whole.stdout)).toMatchObject({ ok: true, fromSeq: 1, checkpoint: { ok: true } });

    const replay = await svc(['relay', 'events', 'replay', '--json', '--at', h.clock.now().toISOString()], { SVC_HOME: h.home });
    expect(replay.code).toBe(0);
    const state = JSON.parse(replay.stdout);
    expect(state.sessions).toEqual(before.sessions);
    expect(state.from).toMatchObject({ cut: { cutSeq: r.cut.seq }, snapshotSeq: expect.any(Number) });
    const text = await svc(['relay', 'events', 'replay'], { SVC_HOME: h.home });
    expect(text.stdout).toContain(`verified from seq ${r.cut.seq + 1}`);
    expect(text.stdout).toContain('a weaker proof than a replay from seq 1');
    const full = JSON.parse(
      (await svc(['relay', 'events', 'replay', '--json', '--archive', archive(), '--at', h.clock.now().toISOString()], { SVC_HOME: h.home })).stdout,
    );
    expect([full.from, full.sessions]).toEqual([undefined, before.sessions]);

    // An export of the pruned log carries its cut and proves on arrival.
    const out = path.join(tempHome(), 'copy.jsonl');
    expect((await svc(['relay', 'events', 'export', '--to', out], { SVC_HOME: h.home })).code).toBe(0);
    expect((await svc(['relay', 'events', 'verify', '--log', out])).code).toBe(0);
  });

  it('the relay starts on the pruned log from its snapshot: its phone gets in, a new one pairs', async () => {
    const relay = await startRelay({ home: h.home, clock: h.clock, config: small, env: { PHONE_ENABLED: '1' } });
    try {
      const a = await Phone.connect(relay.url);
      expect((await a.auth({ session_token: h.token, device_id: h.deviceId || undefined })).type).toBe('auth.ok');
      a.close();
      const { phone } = await pairPhone(relay);
      phone.close();
    } finally {
      await relay.close('test');
    }
    expect((await svc(['relay', 'events', 'verify'], { SVC_HOME: h.home })).code).toBe(0);
  });

  it('a prune a crash interrupted reads as done, and the next start finishes it', async () => {
    // As a crash leaves it: the cut recorded and named pending, one of its segments not yet deleted.
    const later = await svc(['relay', 'events', 'prune', '--before', '2026-01-10T00:00:00Z', '--archive', archive(), '--yes', '--json'], {
      SVC_HOME: h.home,
    });
    const r = JSON.parse(later.stdout) as { segments: string[]; cut: { seq: number } };
    expect(r.segments.length).toBeGreaterThan(0);
    const dir = eventsOf(h.home);
    const left = r.segments[0];
    fs.writeFileSync(path.join(dir, left), fs.readFileSync(path.join(archive(), left)));
    fs.writeFileSync(path.join(dir, PENDING_FILE), JSON.stringify({ cutSeq: r.cut.seq, segments: r.segments, archive: null }));
    expect((await svc(['relay', 'events', 'verify'], { SVC_HOME: h.home })).code).toBe(0);
    const relay = await startRelay({ home: h.home, clock: h.clock, config: small });
    await relay.close('test');
    expect(fs.existsSync(path.join(dir, left))).toBe(false);
    expect(fs.existsSync(path.join(dir, PENDING_FILE))).toBe(false);
  });

  it('a pruned log without a snapshot at or after its cut is refused at start, in a sentence', async () => {
    const home = tempHome();
    fs.cpSync(h.home, home, { recursive: true });
    fs.rmSync(path.join(home, 'relay', 'snapshots'), { recursive: true, force: true });
    const run = await svc(['relay', 'start'], { SVC_HOME: home, RELAY_HOST: '127.0.0.1', RELAY_PORT: '0' }, { signal: AbortSignal.timeout(15_000) });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('the event log starts at a cut');
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('pruning beside a running relay', () => {
  let relay: TestRelay;
  afterEach(() => relay?.close('test'));

  it('the command refuses while the relay holds the home', async () => {
    relay = await startRelay({ config: small });
    const run = await svc(['relay', 'events', 'prune', '--before', '100', '--yes'], { SVC_HOME: relay.home });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('RELAY_LOG_RETENTION_DAYS');
  });

  it('RELAY_LOG_RETENTION_DAYS prunes inside the relay on its clock, never past the snapshot, and the log verifies', async () => {
    const clock = new ManualClock('2026-01-01T00:00:00.000Z');
    relay = await startRelay({ clock, config: small, env: { RELAY_LOG_RETENTION_DAYS: '5' } });
    for (let d = 0; d < 10; d++) {
      for (let i = 0; i < 3; i++) await registerCode(relay, nextCode());
      clock.advanceSeconds(DAY);
    }
    await relay.sweep();
    const live = listSegments(eventsOf(relay.home));
    expect(live[0].firstSeq).toBeGreaterThan(1);
    const cut = lastCut(relay.home) as { cutSeq: number; cutAt: string };
    expect(cut).toMatchObject({ cutSeq: live[0].firstSeq - 1, by: 'retention', archive: null });
    expect(Date.parse(cut.cutAt)).toBeLessThan(clock.now().getTime() - 5 * DAY * 1000);
    const verified = await svc(['relay', 'events', 'verify'], { SVC_HOME: relay.home });
    expect(verified.stdout).toContain(`verified from seq ${cut.cutSeq + 1}`);
    relay = await relay.restart();
    expect(listSegments(eventsOf(relay.home))[0].firstSeq).toBe(cut.cutSeq + 1);
  });
});
