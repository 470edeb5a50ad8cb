import * as fs from 'node:fs';
import * as path from 'node:path';
import { svc } from '../support/cli';
import { startRelay, tempHome } from '../support/harness';

/**
 * A backup is a hostile file when it is restored: tampered, cut short or crafted archives are refused with
 * a plain sentence naming what is wrong, before anything reaches the home (nor anywhere else). Real files,
 * a real relay's home, the CLI's own entry.
 */
jest.setTimeout(60_000);

let archive: Buffer;
let workdir: string;
let relayHome: string;

beforeAll(async () => {
  const relay = await startRelay();
  await relay.close('test');
  relayHome = relay.home;
  workdir = tempHome();
  const out = path.join(workdir, 'good.backup');
  const r = await svc(['relay', 'backup', '--out', out], { SVC_HOME: relay.home });
  expect(r).toMatchObject({ code: 0, stderr: '' });
  archive = fs.readFileSync(out);
});

type Entry = { name: string; header: number; data: number; size: number };

/** The archive's entries, read the way tar lays them out (512-byte header, data padded to 512). */
function entries(buf: Buffer): Entry[] {
  const list: Entry[] = [];
  for (let at = 0; at + 512 <= buf.length && buf[at] !== 0;) {
    const size = parseInt(buf.toString('latin1', at + 124, at + 135), 8);
    list.push({ name: buf.toString('latin1', at, at + 100).replace(/\0.*$/s, ''), header: at, data: at + 512, size });
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return list;
}

const entry = (buf: Buffer, name: string): Entry => entries(buf).find((e) => e.name === name)!;

/** Rewrites a header's name, type or link target, with a checksum that holds (a crafted file, not a damaged one). */
function craft(buf: Buffer, at: number, change: { name?: string; type?: string; link?: string }): Buffer {
  const out = Buffer.from(buf);
  if (change.name !== undefined) {
    out.fill(0, at, at + 100);
    out.write(change.name, at, 'latin1');
  }
  if (change.type !== undefined) out.write(change.type, at + 156, 'latin1');
  if (change.link !== undefined) out.write(change.link, at + 157, 'latin1');
  out.fill(0x20, at + 148, at + 156);
  let sum = 0;
  for (let i = at; i < at + 512; i++) sum += out[i];
  out.write(sum.toString(8).padStart(6, '0') + '\0 ', at + 148, 'latin1');
  return out;
}

/** Restores `buf` into a new home under a fresh folder: the CLI's result, and what that folder holds after. */
async function restore(buf: Buffer, extra: string[] = [], home?: string) {
  const parent = tempHome();
  const file = path.join(workdir, `case-${Math.random().toString(36).slice(2)}.backup`);
  fs.writeFileSync(file, buf);
  const target = home ?? path.join(parent, 'home');
  const r = await svc(['relay', 'restore', file, '--home', target, ...extra]);
  return { ...r, target, left: fs.readdirSync(home ? path.dirname(home) : parent) };
}

function expectRefused(r: { code: number; stderr: string; left: string[] }, message: string | RegExp): void {
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(message);
  expect(r.stderr).not.toContain('unexpected error');
  expect(r.stderr).not.toMatch(/\n\s+at /); // no stack
  expect(r.left).toEqual([]); // no home, no temporary folder
}

describe('restore refuses a hostile backup before anything reaches the home', () => {
  it('restores the untouched archive (the cases below differ from it only in what they change)', async () => {
    const r = await restore(archive);
    expect(r.code).toBe(0);
    expect(r.left).toEqual(['home']);
  });

  it('a flipped byte in a file is refused, naming the file', async () => {
    const e = entry(archive, 'home/relay/secret.key');
    const bad = Buffer.from(archive);
    bad[e.data + 3] ^= 0x01;
    expectRefused(await restore(bad), /refused: home\/relay\/secret\.key: its bytes are not the ones the manifest records/);
  });

  it('a flipped byte in the log is refused, naming the segment', async () => {
    const e = entries(archive).find((x) => x.name.startsWith('home/relay/events/segment-'))!;
    const bad = Buffer.from(archive);
    bad[e.data + 40] ^= 0x01;
    expectRefused(await restore(bad), new RegExp(`refused: ${e.name.replace(/[.]/g, '\\.')}: its bytes`));
  });

  it('a flipped byte in a header is refused as a failed checksum', async () => {
    const bad = Buffer.from(archive);
    bad[entry(archive, 'home/relay/operator.key').header + 5] ^= 0x01;
    expectRefused(await restore(bad), /header fails its checksum/);
  });

  it('entries that climb out, are absolute or are links are refused (nothing written outside either)', async () => {
    const first = entries(archive)[0];
    const outside = path.join(tempHome(), 'escaped');
    const climbing = await restore(craft(archive, first.header, { name: `home/../../../../../../..${outside}` }));
    expectRefused(climbing, /climbs out of the archive/);
    expectRefused(await restore(craft(archive, first.header, { name: outside })), /an absolute path/);
    const link = await restore(craft(archive, first.header, { type: '2', link: '/etc/passwd' }));
    expectRefused(link, /a symbolic link; a backup holds only regular files/);
    expectRefused(await restore(craft(archive, first.header, { type: '1', link: 'home/relay/secret.key' })), /a hard link/);
    expect(fs.existsSync(outside)).toBe(false);
  });

  it('a lock in the archive is refused (it would stop the restored relay)', async () => {
    const e = entry(archive, 'home/relay/operator.key');
    expectRefused(await restore(craft(archive, e.header, { name: 'home/relay/LOCK' })), /a backup never holds a lock/);
  });

  it('a truncated archive is refused, mid-file and at an entry boundary', async () => {
    expectRefused(await restore(archive.subarray(0, Math.floor(archive.length / 2))), /the archive is cut short/);
    const manifest = entry(archive, 'MANIFEST.json');
    expectRefused(await restore(archive.subarray(0, manifest.header)), /the archive is cut short/);
    expectRefused(await restore(archive.subarray(0, archive.length - 512)), /cut short: it ends at byte \d+ inside its end marker/);
  });

  it('an archive whose manifest lists another file set is refused', async () => {
    // A file renamed inside the archive (a valid header): the manifest no longer matches it.
    const e = entry(archive, 'home/relay/operator.key');
    expectRefused(
      await restore(craft(archive, e.header, { name: 'home/relay/other.key' })),
      /home\/relay\/other\.key is in the archive but not in its manifest/,
    );
  });
});

describe('restore into a home that is not empty', () => {
  it('is refused without --force; with --force the relay files are set aside and the backup laid out', async () => {
    const home = path.join(tempHome(), 'svc');
    fs.mkdirSync(path.join(home, 'relay'), { recursive: true });
    fs.mkdirSync(path.join(home, 'profiles'));
    fs.writeFileSync(path.join(home, 'relay', 'secret.key'), 'the old key\n');
    fs.writeFileSync(path.join(home, 'profiles', 'notes.md'), 'the agent keeps this\n');
    const refused = await restore(archive, [], home);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${home} is not empty (it holds profiles, relay)`);
    expect(refused.left).toEqual(['svc']);
    expect(fs.readFileSync(path.join(home, 'relay', 'secret.key'), 'utf8')).toBe('the old key\n');

    const forced = await restore(archive, ['--force'], home);
    expect(forced.code).toBe(0);
    const secret = entry(archive, 'home/relay/secret.key');
    expect(fs.readFileSync(path.join(home, 'relay', 'secret.key'))).toEqual(archive.subarray(secret.data, secret.data + secret.size));
    const aside = fs.readdirSync(home).find((n) => n.startsWith('.before-restore-'))!;
    expect(forced.stdout).toContain(path.join(home, aside));
    expect(fs.readFileSync(path.join(home, aside, 'relay', 'secret.key'), 'utf8')).toBe('the old key\n');
    expect(fs.readFileSync(path.join(home, 'profiles', 'notes.md'), 'utf8')).toBe('the agent keeps this\n');
    expect((await svc(['relay', 'events', 'verify'], { SVC_HOME: home })).code).toBe(0);
  });
});

describe('a write caught half-way', () => {
  it('backs up to the last whole record when the active segment ends inside one (a torn write the relay has not finished)', async () => {
    // A copy of the stopped relay's home whose last segment ends in half a record, as a backup beside a
    // running relay can find it mid-append: the backup must stop at the record before, never hold the half.
    const home = path.join(tempHome(), 'torn');
    fs.cpSync(relayHome, home, { recursive: true });
    const events = path.join(home, 'relay', 'events');
    const last = fs
      .readdirSync(events)
      .filter((f) => f.startsWith('segment-'))
      .sort()
      .at(-1)!;
    const lines = fs.readFileSync(path.join(events, last), 'utf8').trimEnd().split('\n');
    const whole = JSON.parse(lines.at(-1)!) as { seq: number; hash: string };
    fs.appendFileSync(path.join(events, last), '{"seq":' + (whole.seq + 1) + ',"id":"half-written","at":"2026-');
    const out = path.join(workdir, 'torn.backup');
    const r = await svc(['relay', 'backup', '--out', out, '--json'], { SVC_HOME: home });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(r.stdout)).toMatchObject({ head: { seq: whole.seq, hash: whole.hash }, records: whole.seq });
    const restored = await restore(fs.readFileSync(out));
    expect(restored.code).toBe(0);
    const verified = await svc(['relay', 'events', 'verify', '--json'], { SVC_HOME: restored.target });
    expect(verified.code).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, lastSeq: whole.seq, lastHash: whole.hash });
  });
});

describe('bad input is a sentence and a non-zero exit', () => {
  it('backup without --out, onto an existing file, or of a home with no relay; restore of no file', async () => {
    expect((await svc(['relay', 'backup'])).code).toBe(2);
    const existing = path.join(workdir, 'exists');
    fs.writeFileSync(existing, 'x');
    const onto = await svc(['relay', 'backup', '--out', existing], { SVC_HOME: relayHome });
    expect(onto.code).toBe(1);
    expect(onto.stderr).toContain(`${existing} exists: give a new file name`);
    expect(fs.readFileSync(existing, 'utf8')).toBe('x');
    const noRelay = await svc(['relay', 'backup', '--out', path.join(workdir, 'new.backup')], { SVC_HOME: tempHome() });
    expect(noRelay.code).toBe(1);
    expect(noRelay.stderr).toContain('no relay home at');
    const noHome = await svc(['relay', 'restore', path.join(workdir, 'nope.backup'), '--home', path.join(tempHome(), 'h')]);
    expect(noHome.code).toBe(1);
    expect(noHome.stderr).toMatch(/nope\.backup: no such file/);
    const help = await svc(['relay', 'restore', '--help']);
    expect(help.stdout).toContain('Usage: svc relay restore FILE');
  });
});
