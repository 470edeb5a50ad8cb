import { registerCode, startRelay } from '../support/harness';

describe('resilience', () => {
  it('a bus subscriber that throws is logged and the relay keeps serving', async () => {
    const relay = await startRelay();
    const sub = relay.log.bus.events$.subscribe(() => {
      throw new Error('subscriber bug');
    });
    expect((await registerCode(relay, 'RES123')).status).toBe(201);
    await new Promise((r) => setTimeout(r, 50));
    const health = await fetch(`${relay.url}/health`);
    expect(health.status).toBe(200);
    expect(relay.logs.join('')).toContain('event bus subscriber failed');
    expect(relay.logs.join('')).not.toContain('RES123');
    sub.unsubscribe();
    await relay.close();
  });
});
