import { relayStarted, sessionCreated } from '../../../../test/support/events';
import { given, Given, T0 } from '../../../../test/support/given';
import { ReadModels } from '../read-models';
import { assertCanOpenShell, closeShell, detachShell, openShell, reattachShell, sessionNameOf, termDimension } from './terminal';

let pid = 100;
const aSession = (prefix = 'AAAAAAAA') => [relayStarted(), sessionCreated({ tokenPrefix: prefix, deviceId: 'dev', grants: { terminal: null } })];

const input = (shellId: string, sessionName: string, prefix = 'AAAAAAAA') => ({
  shellId,
  sessionName,
  tokenPrefix: prefix,
  deviceId: 'dev',
  connId: 'c1',
  pid: ++pid,
  shell: '/bin/sh',
  cols: 80,
  rows: 24,
});

describe('terminal rules', () => {
  // PROTOCOL.md, Terminal > Decisions > Ownership: "At most 4 per device".
  it('opens up to 4 shells per device, then refuses', () => {
    const g = new Given().apply(aSession());
    for (let i = 0; i < 4; i++) g.when((m) => openShell(m, input(`s${i}`, `n${i}`)));
    given(g)
      .when((m) => openShell(m, input('s9', 'n9')))
      .thenThrows('terminal.limit', 'conflict');
    expect(() => assertCanOpenShell(g.models, 'AAAAAAAA', 'n0')).toThrow(expect.objectContaining({ code: 'terminal.session_exists' }));
  });

  it('refuses a shell for a session that is gone', () => {
    given(aSession())
      .when((m) => openShell(m, input('s1', 'main', 'BBBBBBBB')))
      .thenThrows('terminal.session_gone');
  });

  it('detach sets the grace deadline; reattach clears it; close removes the shell once', () => {
    const g = new Given().apply(aSession());
    g.when((m) => openShell(m, input('s1', 'main')));
    g.when((m, now) => detachShell(m, 's1', 'detach', 600, now), T0);
    const m = g.models;
    expect(m.terminal.shell('s1')).toMatchObject({ connId: null, graceUntil: Date.parse('2026-03-01T12:10:00.000Z') });
    expect(m.terminal.graceExpired(new Date('2026-03-01T12:09:59.999Z'))).toEqual([]);
    expect(m.terminal.graceExpired(new Date('2026-03-01T12:10:00.000Z')).map((s) => s.shellId)).toEqual(['s1']);
    g.when((m) => reattachShell(m, 's1', 'c2'));
    expect(m.terminal.shell('s1')).toMatchObject({ connId: 'c2', graceUntil: null, detachedAt: null });
    const close = (m: ReadModels) => closeShell(m, 's1', 'killed', { exitCode: null, signal: 1 });
    given(g)
      .when(close)
      .then([{ type: 'terminal.closed', data: expect.objectContaining({ shellId: 's1', reason: 'killed', signal: 1, sessionName: 'main' }) }]);
    given(g).when(close).then([]);
    given(g)
      .when((m) => reattachShell(m, 's1', 'c3'))
      .thenThrows('terminal.not_found');
  });

  it('relay.started empties the projection; snapshot/restore round-trips; the same event twice is harmless', () => {
    const g = new Given().apply(aSession());
    const events = openShell(g.models, input('s1', 'main'));
    g.apply(events).apply(events);
    expect(g.models.terminal.allShells()).toHaveLength(1);
    const copy = new ReadModels();
    copy.restore(structuredClone(g.models.snapshot()));
    expect(copy.terminal.allShells()).toEqual(g.models.terminal.allShells());
    g.apply([relayStarted({ pid: 2 })]);
    expect(g.models.terminal.allShells()).toEqual([]);
  });

  it('validates names and sizes', () => {
    expect(sessionNameOf(undefined)).toBe('main');
    expect(sessionNameOf('work-2.a_b')).toBe('work-2.a_b');
    for (const bad of ['../x', '-x', 'a'.repeat(65), 3, 'a b'])
      expect(() => sessionNameOf(bad)).toThrow(expect.objectContaining({ code: 'terminal.bad_session_name' }));
    expect(termDimension('cols', 200)).toBe(200);
    expect(termDimension('rows', 500)).toBe(500);
    for (const [name, bad] of [
      ['cols', 0],
      ['cols', 1.5],
      ['cols', 1001],
      ['rows', 501],
      ['cols', '80'],
      ['rows', undefined],
    ] as const) {
      expect(() => termDimension(name, bad)).toThrow(expect.objectContaining({ code: 'terminal.bad_size' }));
    }
  });
});
