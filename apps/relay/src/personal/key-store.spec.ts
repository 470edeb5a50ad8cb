import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FileKeyStore, KeyFileError, readKeyFile } from './key-store';

/**
 * personal-keys.json is read both by the file store at start and by `restore --to postgres://` from an
 * archive (a file from elsewhere): bounded, every entry checked, refused whole with what is wrong, never
 * read in part and never started over (a new empty file would forget what the old one opens).
 */
describe('personal-keys.json', () => {
  const dir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'svc-key-file-'));
  const ID = 'dev1:2026-03-01T12:0123abcd';
  const KEY = Buffer.alloc(32, 7);
  const write = (content: unknown) => {
    const d = dir();
    const file = path.join(d, 'personal-keys.json');
    fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
    return { d, file };
  };

  it('reads a good file entry by entry; a missing one is null', () => {
    const { file } = write({ v: 1, keys: { [ID]: KEY.toString('base64') } });
    expect(readKeyFile(file)).toEqual([[ID, KEY]]);
    expect(readKeyFile(path.join(dir(), 'personal-keys.json'))).toBeNull();
  });

  it.each([
    ['not JSON', '{"v":1,"keys":', /is not a personal data key file/],
    ['another version', { v: 2, keys: {} }, /is not a personal data key file/],
    ['keys not an object', { v: 1, keys: ['x'] }, /is not a personal data key file/],
    ['a key of 31 bytes', { v: 1, keys: { [ID]: Buffer.alloc(31).toString('base64') } }, /a bad entry \(dev1:/],
    ['a key that is not a string', { v: 1, keys: { [ID]: 7 } }, /a bad entry/],
    ['an id of another shape', { v: 1, keys: { '../../etc': KEY.toString('base64') } }, /a bad entry \(\.\.\/\.\.\/etc\)/],
  ])('refuses %s, whole, saying what is wrong', (_name, content, message) => {
    const { d, file } = write(content);
    expect(() => readKeyFile(file)).toThrow(KeyFileError);
    expect(() => readKeyFile(file)).toThrow(message);
    // The store refuses to start on it and leaves it as it is (never a new empty file over it).
    const before = fs.readFileSync(file);
    expect(() => FileKeyStore.open(d)).toThrow(KeyFileError);
    expect(fs.readFileSync(file)).toEqual(before);
  });

  it('refuses a file past the bound before reading it', () => {
    const { file } = write('x');
    fs.truncateSync(file, 64 * 1024 * 1024 + 1);
    expect(() => readKeyFile(file)).toThrow(/more than a key file can be/);
  });
});
