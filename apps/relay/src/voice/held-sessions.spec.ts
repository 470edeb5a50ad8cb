import { HeldSessions } from './held-sessions';
import { ReplayBuffer } from './replay-buffer';
import type { VoiceSession } from './voice-session';

/** A session holding `bytes` in its replay buffer (one frame). */
function holding(id: string, bytes: number): VoiceSession {
  const replay = new ReplayBuffer(256, 1024 * 1024);
  replay.push(1, null, `{"x":"${'a'.repeat(bytes - 8)}"}`);
  return { id, replay } as unknown as VoiceSession;
}

describe('HeldSessions (what sessions held for a resume hold together)', () => {
  it('sums what each holds, and past the bound gives up the sessions held longest first until the rest fit', () => {
    const held = new HeldSessions(250);
    const [a, b, c] = [holding('a', 100), holding('b', 100), holding('c', 100)];
    held.hold(a);
    held.hold(b);
    expect(held.overflow()).toEqual([]);
    expect(held.summary()).toEqual({ sessions: 2, bytes: 200, maxBytes: 250 });
    held.hold(c);
    expect(held.overflow().map((s) => s.id)).toEqual(['a']);
    expect(held.has('a')).toBe(false);
    expect(held.bytesOf('b')).toBe(100);
    expect(held.bytesOf('a')).toBeNull();
  });

  it('a session resumed or ended leaves the count; one that holds more than the whole bound goes at once', () => {
    const held = new HeldSessions(150);
    const a = holding('a', 100);
    held.hold(a);
    held.release(a);
    expect(held.summary()).toEqual({ sessions: 0, bytes: 0, maxBytes: 150 });
    const big = holding('big', 200);
    held.hold(big);
    expect(held.overflow()).toEqual([big]);
    expect(held.bytes).toBe(0);
  });

  it('a held session that grows after its drop counts as it grows', () => {
    const held = new HeldSessions(250);
    const a = holding('a', 100);
    const b = holding('b', 100);
    held.hold(a);
    held.hold(b);
    b.replay.push(2, null, `{"x":"${'b'.repeat(92)}"}`);
    expect(held.bytes).toBe(300);
    expect(held.overflow()).toEqual([a]);
  });
});
