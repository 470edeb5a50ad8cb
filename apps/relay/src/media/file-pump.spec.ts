import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { pumpFile } from './file-pump';

/** pumpFile over a real socket and a real file. */
describe('pumpFile', () => {
  let dir: string;
  let file: string;
  const content = Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251));
  let result: Promise<boolean>;
  let server: http.Server;
  let mutate: ((p: string) => void) | null = null;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-pump-'));
    file = path.join(dir, 'f.bin');
    server = http.createServer((req, res) => {
      const [start, end] = (req.url ?? '/0/0').split('/').slice(1).map(Number);
      result = (async () => {
        const fh = await fs.promises.open(file);
        try {
          res.writeHead(200, { 'content-length': String(end - start + 1) });
          mutate?.(file);
          return await pumpFile(fh, start, end, res, 64 * 1024);
        } finally {
          await fh.close();
        }
      })();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
  beforeEach(() => {
    fs.writeFileSync(file, content);
    mutate = null;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const url = (start: number, end: number) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/${start}/${end}`;

  it('sends exactly the range, across many reused chunks', async () => {
    const res = await fetch(url(0, content.length - 1));
    expect(Buffer.from(await res.arrayBuffer()).equals(content)).toBe(true);
    expect(await result).toBe(true);
    const part = await fetch(url(70_000, 200_000));
    expect(Buffer.from(await part.arrayBuffer()).equals(content.subarray(70_000, 200_001))).toBe(true);
    expect(await result).toBe(true);
  });

  it('a single byte and a chunk-sized tail', async () => {
    expect(Buffer.from(await (await fetch(url(5, 5))).arrayBuffer())).toEqual(content.subarray(5, 6));
    const tail = await fetch(url(content.length - 65_536, content.length - 1));
    expect(Buffer.from(await tail.arrayBuffer()).equals(content.subarray(content.length - 65_536))).toBe(true);
  });

  it('stops and reports false when the client goes away', async () => {
    fs.writeFileSync(file, Buffer.alloc(64 * 1024 * 1024, 1));
    const ac = new AbortController();
    const res = await fetch(url(0, 64 * 1024 * 1024 - 1), { signal: ac.signal });
    const reader = res.body!.getReader();
    await reader.read();
    ac.abort();
    await expect(result).resolves.toBe(false);
  });

  it('cuts the response when the file shrinks under it, never pads it', async () => {
    mutate = (p) => fs.truncateSync(p, 100_000);
    const res = await fetch(url(0, content.length - 1));
    await expect(res.arrayBuffer()).rejects.toThrow();
    expect(await result).toBe(false);
  });
});
