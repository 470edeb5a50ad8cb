import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import WebSocket from 'ws';
import { ManualClock } from '../../apps/relay/src/common/loop/clock';
import { loadConfig } from '../../apps/relay/src/common/config/config';
import { type RelayConfig } from '../../apps/relay/src/common/config/relay-config';
import { createRelay, type Relay, type RelayOptions } from '../../apps/relay/src/relay';
import { rememberOperatorKey } from './operator-keys';

export type TestRelay = Relay & {
  home: string;
  logs: string[];
  clock: ManualClock;
  /** The home's operator key, and the header that carries it (what the CLI sends). */
  operatorKey: string;
  op: Readonly<Record<string, string>>;
  restart(): Promise<TestRelay>;
};

export { operatorHeaderFor } from './operator-keys';

export function tempHome(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'svc-relay-test-'));
}

/** A real relay on an ephemeral loopback port, with a temp SVC_HOME and a manual clock. */
export async function startRelay(
  opts: {
    home?: string;
    clock?: ManualClock;
    env?: NodeJS.ProcessEnv;
    config?: Partial<RelayConfig>;
    reachBackoff?: { baseMs: number; maxMs: number };
    diskSpace?: RelayOptions['diskSpace'];
    /** false: a relay that seals no personal content (as one from before sealing wrote its home). */
    sealPersonal?: boolean;
  } = {},
): Promise<TestRelay> {
  const home = opts.home ?? tempHome();
  const clock = opts.clock ?? new ManualClock('2026-03-01T12:00:00.000Z');
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(chunk.toString());
      cb();
    },
  });
  const env = { SVC_HOME: home, RELAY_HOST: '127.0.0.1', RELAY_PORT: '0', RELAY_LOG_LEVEL: 'DEBUG', ...opts.env };
  const config = { ...loadConfig(env), sweepIntervalMs: 3_600_000, ...opts.config };
  const relay = await createRelay({
    config,
    clock,
    logDestination: sink,
    onFatal: (e) => logs.push(`FATAL ${e.message}`),
    reachBackoff: opts.reachBackoff,
    diskSpace: opts.diskSpace,
    sealPersonal: opts.sealPersonal,
  });
  const t = relay as TestRelay;
  t.home = home;
  t.logs = logs;
  t.clock = clock;
  t.operatorKey = rememberOperatorKey(t.url, home);
  t.op = { 'x-operator-key': t.operatorKey };
  t.restart = async () => {
    await relay.close('test restart');
    return startRelay({ ...opts, home, clock });
  };
  return t;
}

export type Frame = { channel: string; type: string; id?: string; payload: Record<string, unknown> };

/** A real `ws` phone: sends envelopes, awaits frames by predicate with a timeout that rejects. */
export class Phone {
  readonly frames: Frame[] = [];
  private waiters: Array<{ match: (f: Frame) => boolean; resolve: (f: Frame) => void }> = [];
  closeCode: number | null = null;
  readonly closed: Promise<number>;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const f = JSON.parse(data.toString()) as Frame;
      this.frames.push(f);
      this.waiters = this.waiters.filter((w) => (w.match(f) ? (w.resolve(f), false) : true));
    });
    this.closed = new Promise((resolve) => ws.on('close', (code) => resolve((this.closeCode = code))));
  }

  /** `localAddress` picks the source address (any 127.x.y.z on Linux), so tests can be several peers. */
  static connect(url: string, opts: { path?: string; headers?: Record<string, string>; localAddress?: string } = {}): Promise<Phone> {
    const ws = new WebSocket(url.replace(/^http/, 'ws') + (opts.path ?? '/ws'), { headers: opts.headers, localAddress: opts.localAddress });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new Phone(ws)));
      ws.once('unexpected-response', (_req, res) =>
        reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode })),
      );
      ws.once('error', reject);
    });
  }

  send(channel: string, type: string, payload: Record<string, unknown> = {}, id?: string): void {
    this.ws.send(JSON.stringify({ channel, type, id, payload }));
  }

  sendRaw(data: string | Buffer): void {
    this.ws.send(data);
  }

  /**
   * The first frame that matches (taken from those already received, else awaited). The default limit is
   * generous: a loaded CI machine is slow, and a frame that never comes still fails the test.
   */
  next(match: (f: Frame) => boolean, timeoutMs = 10_000): Promise<Frame> {
    const seen = this.frames.find(match);
    if (seen) {
      this.frames.splice(this.frames.indexOf(seen), 1);
      return Promise.resolve(seen);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no matching frame within ${timeoutMs} ms; got ${JSON.stringify(this.frames)}`)), timeoutMs);
      this.waiters.push({
        match,
        resolve: (f) => {
          clearTimeout(timer);
          this.frames.splice(this.frames.indexOf(f), 1);
          resolve(f);
        },
      });
    });
  }

  type(channel: string, type: string, timeoutMs?: number): Promise<Frame> {
    return this.next((f) => f.channel === channel && f.type === type, timeoutMs);
  }

  async auth(payload: Record<string, unknown>): Promise<Frame> {
    this.send('system', 'auth', payload, 'auth-1');
    return this.next((f) => f.channel === 'system' && (f.type === 'auth.ok' || f.type === 'auth.fail'));
  }

  close(): void {
    this.ws.close();
  }
}

/** `POST /pairing/register` as the svc CLI makes it: with the home's operator key (needed under RELAY_LOOPBACK_TRUST=key). */
export async function registerCode(relay: Relay, code: string, body: Record<string, unknown> = {}): Promise<Response> {
  const key: Record<string, string> = 'operatorKey' in relay ? { 'x-operator-key': String(relay.operatorKey) } : {};
  return fetch(`${relay.url}/pairing/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...key },
    body: JSON.stringify({ code, ...body }),
  });
}

let codeCounter = 0;
export function nextCode(): string {
  codeCounter++;
  return `T${String(codeCounter).padStart(5, '0')}`;
}

/** Registers a code and pairs a phone with it; returns the connected phone and its token. */
export async function pairPhone(
  relay: Relay,
  opts: { terms?: Record<string, unknown>; device?: Record<string, unknown> } = {},
): Promise<{ phone: Phone; token: string; prefix: string; ok: Frame }> {
  const code = nextCode();
  const res = await registerCode(relay, code, opts.terms);
  if (res.status !== 200) throw new Error(`register failed: ${res.status} ${await res.text()}`);
  const phone = await Phone.connect(relay.url);
  const ok = await phone.auth({ pairing_code: code, device_name: 'Test phone', device_id: `dev-${code}`, ...opts.device });
  if (ok.type !== 'auth.ok') throw new Error(`auth failed: ${JSON.stringify(ok)}`);
  const token = ok.payload.session_token as string;
  return { phone, token, prefix: token.slice(0, 8), ok };
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** Every line of the relay's log directory, parsed. */
export function readEvents(home: string): Array<{ seq: number; type: string; actor: string; data: Record<string, unknown> }> {
  const dir = path.join(home, 'relay', 'events');
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort()
    .flatMap((f) =>
      fs
        .readFileSync(path.join(dir, f), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    );
}

/** A response body as JSON, loosely typed for assertions. */

export async function json(res: Response): Promise<any> {
  return res.json();
}
