import { sessionCreated } from '../../../test/support/events';
import { Given, T0 } from '../../../test/support/given';
import type { DeepReadonly } from './deep-readonly';
import type { ReadModels } from './read-models';
import type { Session } from './sessions/sessions.projection';

/**
 * "Never mutate a read model outside a projection" is a type. Each line under `@ts-expect-error` must fail
 * to compile: `npm run check` (tsc -p tsconfig.json) type-checks this file, and a directive whose line
 * compiles is itself an error, so a getter that hands out something mutable again fails the check.
 * Never called: the lines would mutate for real, since the records handed out are the projections' own.
 */
export function mutationsTheCompilerRefuses(m: ReadModels, now: Date, s: Session, ro: DeepReadonly<{ a: { b: number[] } }>): void {
  // @ts-expect-error a session's fields
  m.sessions.byTokenPrefix('p')!.expiresAt = null;
  // @ts-expect-error a session's grants (nested)
  m.sessions.byToken('d', now)!.grants.bridge = null;
  // @ts-expect-error nor deleted
  delete m.sessions.byTokenPrefix('p')!.grants.chat;
  // @ts-expect-error a list a getter returns
  m.sessions.active(now).sort();
  // @ts-expect-error a function that takes a Session cannot change it either
  s.deviceName = 'x';
  // @ts-expect-error a trust's terms (nested)
  m.trust.get('t')!.terms.grants.chat = 1;
  // @ts-expect-error trust.all(): a list it returns
  m.trust.all().pop();
  // @ts-expect-error pairing.get(): `state`
  m.pairing.get('c')!.state = 'ready';
  // @ts-expect-error what a client advertised
  m.connections.all()[0].supports!.confirm = true;
  // @ts-expect-error phoneThreads.message(): `state`
  m.phoneThreads.message('x')!.state = 'delivered';
  // @ts-expect-error a thread's entries
  m.phoneThreads.threadById('c')!.entries.push({ kind: 'message', id: 'x' });
  // @ts-expect-error phoneThreads.reply(): `handed`
  m.phoneThreads.reply('r')!.handed = true;
  // @ts-expect-error phoneThreads.subscriber(): `connId`
  m.phoneThreads.subscriber()!.connId = 'x';
  // @ts-expect-error notifications.recent(): `title`
  m.notifications.recent()[0].title = null;
  // @ts-expect-error clipboardInbox.get(): `staleAt`
  m.clipboardInbox.get('e')!.staleAt = 0;
  // @ts-expect-error imageActivity.forSession(): `progress`
  m.imageActivity.forSession('s', null)[0].progress = 1;
  // @ts-expect-error terminal.shell(): `connId`
  m.terminal.shell('s')!.connId = null;
  // @ts-expect-error terminal.tui(): `pid`
  m.terminal.tui('t')!.pid = 0;
  // @ts-expect-error terminalRecordings.get(): `sizeBytes`
  m.terminalRecordings.get('r')!.sizeBytes = 0;
  // @ts-expect-error bridge.device(): `masterEnabled`
  m.bridge.device('p')!.masterEnabled = true;
  // @ts-expect-error a phone's trusted verbs (nested)
  m.bridge.device('p')!.trustedVerbs.push('send');
  // @ts-expect-error a command's shape (nested)
  m.bridge.activity()[0].shape.x = 1;
  // @ts-expect-error bridge.pendingConfirmation(): `deadline`
  m.bridge.pendingConfirmation('r')!.deadline = 0;
  // @ts-expect-error bridge.decisionCounts(): `allow`
  m.bridge.decisionCounts().allow = 0;
  // @ts-expect-error media.byToken(): `expiresAt`
  m.media.byToken('d')!.expiresAt = 0;
  // @ts-expect-error media.ownedPaths(): a list it returns
  m.media.ownedPaths().push('/etc/passwd');
  // @ts-expect-error voice.session(): `detached`
  m.voice.session('v')!.detached = false;
  // @ts-expect-error voice.stats(): `failures`
  m.voice.stats().failures = 0;
  // @ts-expect-error voice.settings(): `voice`
  m.voice.settings('voice_output').voice = 'x';
  // @ts-expect-error voiceActivity.recentCalls(): `outcome`
  m.voiceActivity.recentCalls()[0].outcome = 'ok';
  // @ts-expect-error profiles.entries(): `name`
  m.profiles.entries()[0].name = 'x';
  // @ts-expect-error profiles.writes(): `sha256`
  m.profiles.writes()[0].sha256 = 'x';
  // @ts-expect-error desktop.client(): `workspace`
  m.desktop.client('c')!.workspace = null;
  // @ts-expect-error desktop.controlSession(): `usedAt`
  m.desktop.controlSession('c')!.usedAt = 0;
  // @ts-expect-error desktop.outcomeCounts(): `ok`
  m.desktop.outcomeCounts().ok = 0;
  // @ts-expect-error usage.usage(): `failures`
  m.usage.usage()[0].failures = 0;
  // @ts-expect-error usage.since: a getter only
  m.usage.since = 0;
  // @ts-expect-error Secure Link's Reach state (nested)
  m.secureLink.state.reach.state = 'connected';
  // @ts-expect-error personalData.recent(): `keys`
  m.personalData.recent()[0].keys = 0;
  // @ts-expect-error rateLimit.activeBlocks(): `until`
  m.rateLimit.activeBlocks(now)[0].until = 0;
  // @ts-expect-error the seq the models are at
  m.lastSeq = 0;
  // @ts-expect-error DeepReadonly reaches arrays inside objects
  ro.a.b.push(1);
}

describe('read models outside their projections', () => {
  it('hand out the projection’s own record, not a copy: the read-only type is the guard, at no cost', () => {
    const g = new Given();
    g.event(sessionCreated({ tokenPrefix: 'aaaa1111' }));
    expect(g.models.sessions.byTokenPrefix('aaaa1111')).toBe(g.models.sessions.active(T0)[0]);
  });

  it('change only through events, which the projection applies to its own record', () => {
    const g = new Given();
    g.event(sessionCreated({ tokenPrefix: 'aaaa1111', grants: { chat: null, bridge: null } }));
    const held = g.models.sessions.byTokenPrefix('aaaa1111')!;
    g.event({ type: 'session.grant_expired', data: { tokenPrefix: 'aaaa1111', channel: 'bridge' } });
    expect(held.grants).toEqual({ chat: null });
  });
});
