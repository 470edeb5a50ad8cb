import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort } from './ports';

/**
 * What puts the world on the relay's loopback without a single forwarding header: an L4 forwarder (what
 * `ssh -R`, socat or a TCP tunnel do) and nginx with a textbook `proxy_pass` (it sends `Host:
 * 127.0.0.1:PORT` and no X-Forwarded-For). Both are real: real sockets, a real nginx.
 */
export type Forwarder = { url: string; close(): Promise<void> };

/** A TCP forwarder on an ephemeral loopback port that pipes every connection to `port`, byte for byte. */
export async function tcpForwarder(port: number): Promise<Forwarder> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: own } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${own}`,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** nginx in the foreground, configured with only `location / { proxy_pass http://127.0.0.1:PORT; }`. */
export async function nginxForwarder(port: number): Promise<Forwarder> {
  const bin = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((f) => fs.existsSync(f));
  if (!bin) throw new Error('nginx is not installed: apt-get install -y nginx (the suite replays a same-host proxy with it)');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-nginx-'));
  const listen = await freePort();
  const conf = path.join(dir, 'nginx.conf');
  fs.writeFileSync(
    conf,
    [
      'daemon off;',
      'master_process off;',
      'worker_processes 1;',
      `pid ${path.join(dir, 'nginx.pid')};`,
      `error_log ${path.join(dir, 'error.log')} warn;`,
      'events { worker_connections 64; }',
      'http {',
      `  access_log off;`,
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${path.join(dir, t)};`),
      `  server { listen 127.0.0.1:${listen}; location / { proxy_pass http://127.0.0.1:${port}; } }`,
      '}',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(bin, ['-p', dir, '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = `http://127.0.0.1:${listen}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited ${child.exitCode}: ${stderr}`);
    try {
      await fetch(`${url}/health`);
      break;
    } catch {
      if (i > 200) throw new Error(`nginx did not start: ${stderr}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  return {
    url,
    close: async () => {
      const done = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGQUIT');
      await done;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One request written by hand (what fetch will not send: an absolute-form target, two Host headers). */
export function rawRequest(port: number, text: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(text));
    let out = '';
    s.on('data', (d: Buffer) => (out += d.toString()));
    s.on('end', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(out)?.[1] ?? 0);
      resolve({ status, body: out.slice(out.indexOf('\r\n\r\n') + 4) });
    });
    s.on('error', reject);
  });
}
