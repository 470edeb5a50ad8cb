import type { StoredEvent } from '@svc/events';
import { ReadModels } from '../read-models';
import { assertCanOpenShell, closeShell, detachShell, openShell, reattachShell, sessionNameOf, termSize, MAX_SHELLS_PER_DEVICE } from './terminal';

let seq = 0;
function stored(type: string, data: object, at = '2026-03-01T12:00:00.000Z'): StoredEvent {
  seq++;
  return { seq, id: `e${seq}`, at, type, actor: 'system', data, v: 1, prev: '', hash: '' } as unknown as StoredEvent;
}

function withSession(prefix = 'AAAAAAAA'): ReadModels {
  const m = new ReadModels();
  m.apply(stored('relay.started', { version: 't', pid: 1, host: 'h', port: 1, tls: false }));
  m.apply(
    stored('session.created', {
      tokenDigest: `d-${prefix}`,
      tokenPrefix: prefix,
      deviceId: 'dev',
      deviceName: 'Phone',
      deviceModel: null,
      devicePlatform: null,
      transportHint: null,
      expiresAt: null,
      grants: { terminal: null },
      ip: '127.0.0.1',
    }),
  );
  return m;
}

const input = (shellId: string, sessionName: string, prefix = 'AAAAAAAA') => ({
  shellId,
  sessionName,
  tokenPrefix: prefix,
  deviceId: 'dev',
  connId: 'c1',
  pid: 100 + seq,
  shell: '/bin/sh',
  cols: 80,
  rows: 24,
});
const applyAll = (m: ReadModels, events: ReadonlyArray<{ type: string; data: object }>) => events.forEach((e) => m.apply(stored(e.type, e.data)));

describe('terminal rules', () => {
  it('opens up to 4 shells per device, then refuses', () => {
    const m = withSession();
    for (let i = 0; i < MAX_SHELLS_PER_DEVICE; i++) applyAll(m, openShell(m, input(`s${i}`, `n${i}`)));
    expect(() => openShell(m, input('s9', 'n9'))).toThrow(expect.objectContaining({ code: 'terminal.limit', kind: 'conflict' }));
    expect(() => assertCanOpenShell(m, 'AAAAAAAA', 'n0')).toThrow(expect.objectContaining({ code: 'terminal.session_exists' }));
  });

  it('refuses a shell for a session that is gone', () => {
    const m = withSession();
    expect(() => openShell(m, input('s1', 'main', 'BBBBBBBB'))).toThrow(expect.objectContaining({ code: 'terminal.session_gone' }));
  });

  it('detach sets the grace deadline; reattach clears it; close removes the shell once', () => {
    const m = withSession();
    applyAll(m, openShell(m, input('s1', 'main')));
    const now = new Date('2026-03-01T12:00:00.000Z');
    applyAll(m, detachShell(m, 's1', 'detach', 600, now));
    expect(m.terminal.shell('s1')).toMatchObject({ connId: null, graceUntil: Date.parse('2026-03-01T12:10:00.000Z') });
    expect(m.terminal.graceExpired(new Date('2026-03-01T12:09:59.999Z'))).toEqual([]);
    expect(m.terminal.graceExpired(new Date('2026-03-01T12:10:00.000Z')).map((s) => s.shellId)).toEqual(['s1']);
    applyAll(m, reattachShell(m, 's1', 'c2'));
    expect(m.terminal.shell('s1')).toMatchObject({ connId: 'c2', graceUntil: null, detachedAt: null });
    const closed = closeShell(m, 's1', 'killed', { exitCode: null, signal: 1 });
    expect(closed).toEqual([
      { type: 'terminal.closed', data: expect.objectContaining({ shellId: 's1', reason: 'killed', signal: 1, sessionName: 'main' }) },
    ]);
    applyAll(m, closed);
    expect(closeShell(m, 's1', 'killed', { exitCode: null, signal: 1 })).toEqual([]);
    expect(() => reattachShell(m, 's1', 'c3')).toThrow(expect.objectContaining({ code: 'terminal.not_found' }));
  });

  it('relay.started empties the projection; snapshot/restore round-trips; the same event twice is harmless', () => {
    const m = withSession();
    const events = openShell(m, input('s1', 'main'));
    applyAll(m, events);
    applyAll(m, events);
    expect(m.terminal.allShells()).toHaveLength(1);
    const copy = new ReadModels();
    copy.restore(structuredClone(m.snapshot()));
    expect(copy.terminal.allShells()).toEqual(m.terminal.allShells());
    m.apply(stored('relay.started', { version: 't', pid: 2, host: 'h', port: 1, tls: false }));
    expect(m.terminal.allShells()).toEqual([]);
  });

  it('validates names and sizes', () => {
    expect(sessionNameOf(undefined)).toBe('main');
    expect(sessionNameOf('work-2.a_b')).toBe('work-2.a_b');
    for (const bad of ['../x', '-x', 'a'.repeat(65), 3, 'a b'])
      expect(() => sessionNameOf(bad)).toThrow(expect.objectContaining({ code: 'terminal.bad_session_name' }));
    expect(termSize({}, { cols: 80, rows: 24 })).toEqual({ cols: 80, rows: 24 });
    expect(termSize({ cols: 200, rows: 60 }, null)).toEqual({ cols: 200, rows: 60 });
    for (const bad of [
      { cols: 0, rows: 1 },
      { cols: 1.5, rows: 1 },
      { cols: 1001, rows: 1 },
      { cols: 10, rows: 501 },
      { cols: '80', rows: 24 },
      {},
    ]) {
      expect(() => termSize(bad, null)).toThrow(expect.objectContaining({ code: 'terminal.bad_size' }));
    }
  });
});
