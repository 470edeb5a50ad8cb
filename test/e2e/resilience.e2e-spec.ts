import { registerCode, startRelay } from '../support/harness';

describe('resilience', () => {
  it('a bus subscriber that throws is logged and the relay keeps serving', async () => {
    const relay = await startRelay();
    const sub = relay.loop.bus.events$.subscribe(() => {
      throw new Error('subscriber bug');
    });
    expect((await registerCode(relay, 'RES123')).status).toBe(200);
    // The bus delivers after the commit; wait for the failure to be logged rather than sleeping.
    for (let i = 0; i < 200 && !relay.logs.join('').includes('event bus subscriber failed'); i++) await new Promise((r) => setTimeout(r, 10));
    const health = await fetch(`${relay.url}/health`);
    expect(health.status).toBe(200);
    expect(relay.logs.join('')).toContain('event bus subscriber failed');
    expect(relay.logs.join('')).not.toContain('RES123');
    sub.unsubscribe();
    await relay.close();
  });
});
