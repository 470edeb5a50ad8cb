import { SpeechAborted, SpeechGate, SpeechGateBusy } from './speech-gate';

describe('SpeechGate', () => {
  it('runs at most maxRunning, queues maxQueued in order, refuses the rest at once', async () => {
    const gate = new SpeechGate(2, 2);
    const a = await gate.acquire({ waitMs: 1000 });
    const b = await gate.acquire({ waitMs: 1000 });
    const order: string[] = [];
    const c = gate.acquire({ waitMs: 1000 }).then((r) => (order.push('c'), r));
    const d = gate.acquire({ waitMs: 1000 }).then((r) => (order.push('d'), r));
    await expect(gate.acquire({ waitMs: 1000 })).rejects.toBeInstanceOf(SpeechGateBusy);
    expect({ active: gate.active, waiting: gate.waiting }).toEqual({ active: 2, waiting: 2 });
    a();
    a(); // twice is harmless
    const releaseC = await c;
    expect({ active: gate.active, waiting: gate.waiting }).toEqual({ active: 2, waiting: 1 });
    b();
    const releaseD = await d;
    expect(order).toEqual(['c', 'd']);
    releaseC();
    releaseD();
    expect({ active: gate.active, waiting: gate.waiting }).toEqual({ active: 0, waiting: 0 });
  });

  it('a waiter leaves the queue when its caller aborts or its wait runs out', async () => {
    const gate = new SpeechGate(1, 4);
    const held = await gate.acquire({ waitMs: 1000 });
    const abort = new AbortController();
    const gone = gate.acquire({ waitMs: 1000, signal: abort.signal });
    const slow = gate.acquire({ waitMs: 20 });
    abort.abort();
    await expect(gone).rejects.toBeInstanceOf(SpeechAborted);
    await expect(slow).rejects.toBeInstanceOf(SpeechGateBusy);
    expect(gate.waiting).toBe(0);
    held();
    expect(gate.active).toBe(0);
    await expect(gate.acquire({ waitMs: 10, signal: AbortSignal.abort() })).rejects.toBeInstanceOf(SpeechAborted);
  });
});
