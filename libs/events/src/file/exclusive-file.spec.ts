import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createFileExclusive, replaceFile } from './exclusive-file';

// linkSync is wrapped so a test can play a filesystem without hard links.
jest.mock('node:fs', () => {
  const real = jest.requireActual<typeof import('node:fs')>('node:fs');
  return { ...real, linkSync: jest.fn((from: string, to: string) => real.linkSync(from, to)) };
});

describe('createFileExclusive and replaceFile', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-excl-'));
    file = path.join(dir, 'f');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('creates the file once (0600, with its content); a second call leaves it alone and says so', () => {
    expect(createFileExclusive(file, 'one\n')).toBe(true);
    expect(fs.readFileSync(file, 'utf8')).toBe('one\n');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(createFileExclusive(file, 'two\n')).toBe(false);
    expect(fs.readFileSync(file, 'utf8')).toBe('one\n');
    expect(fs.readdirSync(dir)).toEqual(['f']);
  });

  it.each(['EPERM', 'ENOTSUP'])('falls back to an O_EXCL create where hard links fail with %s', (code) => {
    const fail = () => {
      throw Object.assign(new Error(`${code}: no links here`), { code });
    };
    (fs.linkSync as unknown as jest.Mock).mockImplementationOnce(fail).mockImplementationOnce(fail);
    expect(createFileExclusive(file, 'one\n')).toBe(true);
    expect(fs.readFileSync(file, 'utf8')).toBe('one\n');
    expect(createFileExclusive(file, 'two\n')).toBe(false);
    expect(fs.readFileSync(file, 'utf8')).toBe('one\n');
    expect(fs.readdirSync(dir)).toEqual(['f']);
  });

  it('passes on other errors, leaving nothing behind', () => {
    (fs.linkSync as unknown as jest.Mock).mockImplementationOnce(() => {
      throw Object.assign(new Error('EIO: disk on fire'), { code: 'EIO' });
    });
    expect(() => createFileExclusive(file, 'one\n')).toThrow('EIO: disk on fire');
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('replaceFile swaps the content in one step', () => {
    fs.writeFileSync(file, 'old\n');
    replaceFile(file, 'new\n');
    expect(fs.readFileSync(file, 'utf8')).toBe('new\n');
    expect(fs.readdirSync(dir)).toEqual(['f']);
  });
});
