import * as fs from 'node:fs';
import { nextCode, Phone, registerCode, startRelay, type TestRelay } from '../support/harness';

// fdatasync stays real, but a test can hold one to act while a pairing is being written.
jest.mock('node:fs', () => {
  const real = jest.requireActual<typeof import('node:fs')>('node:fs');
  return { ...real, fdatasync: jest.fn((fd: number, cb: (e: NodeJS.ErrnoException | null) => void) => real.fdatasync(fd, cb)) };
});
const realFs = jest.requireActual<typeof import('node:fs')>('node:fs');

/**
 * Sockets that never authenticate must not lock phones out: before, the 64 idle sockets allowed in all
 * were a global budget, so a flood held every phone at 503 for as long as it kept reconnecting. Now each
 * address holds at most `maxUnauthenticatedPerAddress` of them and, at either cap, the oldest idle socket
 * is dropped (close 1013) to admit the newcomer: a phone that authenticates promptly always gets in.
 */
describe('floods of unauthenticated sockets', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    // The slow-connection guard (slow-clients.e2e-spec) is set out of the way: this suite is about sockets.
    relay = await startRelay({ config: { maxUnauthenticatedSockets: 16, maxUnauthenticatedPerAddress: 4, maxSlowConnectionsPerAddress: 10_000 } });
  });
  afterAll(() => relay.close('test done'));

  async function pairFrom(localAddress: string): Promise<Phone> {
    const code = nextCode();
    expect((await registerCode(relay, code)).status).toBe(200);
    const phone = await Phone.connect(relay.url, { localAddress });
    const ok = await phone.auth({ pairing_code: code, device_name: 'Real phone', device_id: `dev-${code}` });
    expect(ok.type).toBe('auth.ok');
    return phone;
  }

  const flood = (n: number, addr: (i: number) => string) =>
    Promise.allSettled(Array.from({ length: n }, (_, i) => Phone.connect(relay.url, { localAddress: addr(i) }))).then((r) =>
      r.flatMap((x) => (x.status === 'fulfilled' ? [x.value] : [])),
    );

  /** Close frames of dropped sockets may still be on their way when the phone is in. */
  async function eventually(check: () => boolean): Promise<void> {
    for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(check()).toBe(true);
  }

  const closeAll = async (socks: Phone[]) => {
    for (const s of socks) s.close();
    await Promise.all(socks.map((s) => s.closed));
  };

  it('from the same address: 200 idle sockets, then a phone from that address pairs', async () => {
    const idle = await flood(200, () => '127.0.2.1');
    const phone = await pairFrom('127.0.2.1');
    // At most the per-address cap of the flood is still open; the rest were dropped with 1013.
    expect(idle.length).toBe(200);
    await eventually(() => idle.filter((p) => p.closeCode === 1013).length >= 196);
    expect(idle.filter((p) => p.closeCode === null).length).toBeLessThanOrEqual(4);
    phone.close();
    await closeAll(idle);
  });

  it('from many addresses at the global cap: a phone from another address pairs', async () => {
    const idle = await flood(64, (i) => `127.0.3.${(i % 32) + 1}`);
    const phone = await pairFrom('127.0.4.1');
    await eventually(() => idle.filter((p) => p.closeCode === null).length <= 16);
    // The paired phone is not counted any more: 16 newer idle sockets do not drop it.
    const more = await flood(16, (i) => `127.0.5.${i + 1}`);
    phone.send('system', 'ping', { ts: 1 }, 'still-here');
    expect((await phone.next((f) => f.id === 'still-here')).type).toBe('pong');
    phone.close();
    await closeAll([...idle, ...more]);
  });

  it('an idle socket that is dropped is told why', async () => {
    const idle = await flood(4, () => '127.0.6.1');
    const fifth = await Phone.connect(relay.url, { localAddress: '127.0.6.1' });
    expect(await idle[0].closed).toBe(1013);
    await closeAll([...idle, fifth]);
  });

  it('a phone whose pairing is being written is never the one dropped, however many sockets follow from its address', async () => {
    const code = nextCode();
    expect((await registerCode(relay, code)).status).toBe(200);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const fdatasync = fs.fdatasync as unknown as jest.Mock;
    const calls = fdatasync.mock.calls.length;
    fdatasync.mockImplementationOnce((fd: number, cb: (e: NodeJS.ErrnoException | null) => void) => {
      void held.then(() => realFs.fdatasync(fd, cb));
    });
    let idle: Phone[] = [];
    try {
      const phone = await Phone.connect(relay.url, { localAddress: '127.0.7.1' });
      phone.send('system', 'auth', { pairing_code: code, device_name: 'Prompt phone', device_id: `dev-${code}` }, 'a1');
      await eventually(() => fdatasync.mock.calls.length > calls);
      // Twice the per-address cap arrives while the pairing waits for the disk.
      idle = await flood(8, () => '127.0.7.1');
      await eventually(() => idle.filter((p) => p.closeCode === 1013).length >= 4);
      release();
      const ok = await phone.next((f) => f.id === 'a1');
      expect(ok.type).toBe('auth.ok');
      phone.send('system', 'ping', { ts: 2 }, 'in');
      expect((await phone.next((f) => f.id === 'in')).type).toBe('pong');
      expect(phone.closeCode).toBeNull();
      phone.close();
    } finally {
      release();
      await closeAll(idle);
    }
  });
});
