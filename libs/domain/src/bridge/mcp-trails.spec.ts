import type { StoredEvent } from '@svc/events';
import { BridgeProjection } from './bridge.projection';
import { MAX_TRAILS, TRAIL_STEPS } from './mcp-trails';

let seq = 0;
const ev = (type: string, data: Record<string, unknown>, ms = seq * 1000): StoredEvent =>
  ({ seq: ++seq, id: `e${seq}`, at: new Date(Date.UTC(2026, 2, 1, 12) + ms).toISOString(), type, actor: 'device:aaaa1111', data }) as StoredEvent;
const origin = (session: string) => ({ via: 'mcp', client: 'agent', session });
const sent = (requestId: string, path: string, o: object = origin('s1')) =>
  ev('bridge.command_sent', { requestId, tokenPrefix: 'aaaa1111', connId: 'c', method: 'POST', path, shape: { x: 1 }, autoDisableAt: null, ...o });
const answered = (requestId: string, path: string, evidence: object | null) =>
  ev('bridge.command_answered', { requestId, tokenPrefix: 'aaaa1111', path, status: 200, latencyMs: 3, evidence });

/** The read model behind the console's playback of MCP sessions (issue 40, item 6). */
describe('MCP trails', () => {
  it('groups an MCP session’s commands in order with their outcome and evidence; HTTP commands and v1 records have no trail', () => {
    const p = new BridgeProjection();
    for (const e of [
      sent('r1', '/tap'),
      answered('r1', '/tap', { before: 'aa', after: 'bb' }),
      sent('r2', '/screen'),
      answered('r2', '/screen', null),
      sent('h1', '/tap', {}),
      // A v1 record (as upcast): origin without a session.
      sent('old', '/tap', { via: 'mcp', client: 'agent' }),
      ev('bridge.safety_decided', {
        decision: 'blocked_package',
        tokenPrefix: 'aaaa1111',
        requestId: 'r3',
        method: 'POST',
        path: '/open_app',
        reason: 'blocked',
        ...origin('s1'),
      }),
      sent('r4', '/type'),
      ev('bridge.command_failed', {
        requestId: 'r4',
        tokenPrefix: 'aaaa1111',
        path: '/type',
        reason: 'timeout',
        latencyMs: 9,
        evidence: { before: 'bb', after: null },
      }),
    ])
      p.apply(e);
    const [t] = p.trails.list();
    expect(p.trails.list()).toHaveLength(1);
    expect(t).toMatchObject({ session: 's1', client: 'agent', tokenPrefix: 'aaaa1111', dropped: 0 });
    expect(t.steps.map((s) => [s.requestId, s.path, s.outcome, s.evidence])).toEqual([
      ['r1', '/tap', 'answered', { before: 'aa', after: 'bb' }],
      ['r2', '/screen', 'answered', null],
      ['r3', '/open_app', 'refused', null],
      ['r4', '/type', 'timeout', { before: 'bb', after: null }],
    ]);
  });

  it('the same event twice is harmless; a snapshot restores the same trails; relay.started interrupts a pending step', () => {
    const p = new BridgeProjection();
    const events = [sent('r1', '/tap'), answered('r1', '/tap', { before: 'a', after: 'b' }), sent('r2', '/swipe')];
    for (const e of [...events, ...events]) p.apply(e);
    expect(p.trails.get('s1')!.steps).toHaveLength(2);
    const copy = new BridgeProjection();
    copy.restore(structuredClone(p.snapshot()));
    expect(copy.trails.list()).toEqual(p.trails.list());
    copy.apply(ev('relay.started', {}));
    expect(copy.trails.get('s1')!.steps.map((s) => s.outcome)).toEqual(['answered', 'interrupted']);
    // A snapshot from before trails existed restores to none.
    const old = structuredClone(p.snapshot()) as Record<string, unknown>;
    delete old.trails;
    const none = new BridgeProjection();
    none.restore(old as ReturnType<BridgeProjection['snapshot']>);
    expect(none.trails.list()).toEqual([]);
  });

  it('keeps the newest sessions (the setting, at most MAX_TRAILS) and each session’s newest steps', () => {
    const p = new BridgeProjection();
    for (let i = 0; i < MAX_TRAILS + 5; i++) p.apply(sent(`q${i}`, '/tap', origin(`s${i}`)));
    expect(p.trails.list()).toHaveLength(MAX_TRAILS);
    expect(p.trails.get('s0')).toBeUndefined();
    p.trails.keepAtMost(3);
    expect(p.trails.list().map((t) => t.session)).toEqual([`s${MAX_TRAILS + 4}`, `s${MAX_TRAILS + 3}`, `s${MAX_TRAILS + 2}`]);
    for (let i = 0; i < TRAIL_STEPS + 10; i++) p.apply(sent(`long${i}`, '/tap', origin('long')));
    const long = p.trails.get('long')!;
    expect(long.steps).toHaveLength(TRAIL_STEPS);
    expect(long.steps[0].requestId).toBe('long10');
    expect(long.dropped).toBeGreaterThan(0);
    expect(p.trails.list()).toHaveLength(3);
  });
});
