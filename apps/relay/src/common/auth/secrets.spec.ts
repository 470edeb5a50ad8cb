import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { newSessionToken, Secrets, secureRandomBytes } from './secrets';

// linkSync is wrapped so one test can let "another relay" create the key at the worst moment.
jest.mock('node:fs', () => {
  const real = jest.requireActual<typeof import('node:fs')>('node:fs');
  return { ...real, linkSync: jest.fn((from: string, to: string) => real.linkSync(from, to)) };
});
const realFs = jest.requireActual<typeof import('node:fs')>('node:fs');

describe('secureRandomBytes', () => {
  it('hands out each pooled byte once, across pool refills', () => {
    const seen = new Set<string>();
    // 3,000 draws of 16 bytes span about twelve 4 KiB pools; any reuse would repeat a value.
    for (let i = 0; i < 3000; i++) {
      const b = secureRandomBytes(16);
      expect(b).toHaveLength(16);
      seen.add(b.toString('hex'));
    }
    expect(seen.size).toBe(3000);
  });

  it('returns a copy that later draws do not change', () => {
    const a = secureRandomBytes(32);
    const before = a.toString('hex');
    for (let i = 0; i < 300; i++) secureRandomBytes(32);
    expect(a.toString('hex')).toBe(before);
    expect(before).not.toBe('0'.repeat(64));
  });

  it('serves requests larger than the pool directly', () => {
    expect(secureRandomBytes(10_000)).toHaveLength(10_000);
  });

  it('makes 43-character base64url session tokens', () => {
    const t = newSessionToken();
    expect(t).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(newSessionToken()).not.toBe(t);
  });
});

describe('Secrets.load', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-secrets-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('makes a 0600 key once and reads the same key afterwards', () => {
    const a = Secrets.load(dir);
    const file = path.join(dir, 'secret.key');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(Secrets.load(dir).digest('x')).toBe(a.digest('x'));
    expect(fs.readdirSync(dir)).toEqual(['secret.key']);
  });

  it('a key that appeared meanwhile (another relay starting at the same moment) is used, not overwritten', () => {
    const file = path.join(dir, 'secret.key');
    const theirs = Buffer.alloc(32, 9).toString('base64url');
    // The other relay links its key in between our failed read and our own link.
    (fs.linkSync as unknown as jest.Mock).mockImplementationOnce((from: string, to: string) => {
      realFs.writeFileSync(file, theirs + '\n', { mode: 0o600 });
      realFs.linkSync(from, to);
    });
    const ours = Secrets.load(dir);
    expect(fs.readFileSync(file, 'utf8').trim()).toBe(theirs);
    expect(ours.digest('x')).toBe(Secrets.load(dir).digest('x'));
    expect(fs.readdirSync(dir)).toEqual(['secret.key']);
  });

  it('refuses a key file that is too short, saying how to recover', () => {
    fs.writeFileSync(path.join(dir, 'secret.key'), 'c2hvcnQ\n');
    expect(() => Secrets.load(dir)).toThrow(/too short; delete it to make a new one/);
  });
});
