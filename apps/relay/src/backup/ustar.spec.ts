import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { listTar, TarWriter, unsafeName } from './ustar';

describe('the backup container (ustar)', () => {
  it('writes what GNU tar reads, a name past 100 bytes split into prefix and name; listTar reads it back', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-ustar-'));
    const file = path.join(dir, 'a.tar');
    const long = `home/relay/recordings/${'d'.repeat(60)}/${'0123abcd-0000-4000-8000-000000000000'}.cast`;
    const fd = fs.openSync(file, 'wx', 0o600);
    const w = new TarWriter(fd);
    await w.add('home/relay/secret.key', 5, [Buffer.from('key\n!')]);
    await w.add(long, 1000, [Buffer.alloc(1000, 7)]);
    w.finish();
    fs.closeSync(fd);
    expect(execFileSync('tar', ['-tf', file], { encoding: 'utf8' }).trim().split('\n')).toEqual(['home/relay/secret.key', long]);
    const rfd = fs.openSync(file, 'r');
    expect(listTar(rfd)).toEqual([
      { name: 'home/relay/secret.key', size: 5, offset: 512 },
      { name: long, size: 1000, offset: 1536 },
    ]);
    fs.closeSync(rfd);
  });

  it('a written entry must be exactly its declared size', async () => {
    const fd = fs.openSync(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-ustar-')), 'b.tar'), 'wx');
    await expect(new TarWriter(fd).add('home/x', 4, [Buffer.from('abc')])).rejects.toThrow('home/x ended after 3 of its 4 bytes');
    fs.closeSync(fd);
  });

  it.each([
    ['../x', 'climbs out'],
    ['home/./x', 'climbs out'],
    ['/etc/passwd', 'absolute'],
    ['home/a b', 'characters'],
    ['home/a\\b', 'characters'],
    ['', 'empty'],
  ])('refuses the name %j', (name, why) => {
    expect(unsafeName(name)).toContain(why);
  });
});
