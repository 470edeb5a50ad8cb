import { readEvents, startRelay, type TestRelay } from '../support/harness';
import { dc, startSim, until } from '../support/bridge';
import type { PhoneSim } from '../../apps/phone-sim/src/phone-sim';

/*
 * Issue 34, finding 4: "implicit intents reach blocklisted apps". `/send_intent {action: VIEW, data:
 * "venmo://paycharge?..."}` and `/broadcast {action: "com.venmo.ACTION"}` name no app; Android picks the
 * one that handles them, which the relay cannot know, so the blocklist could not see Venmo. The app runs
 * no confirmation for either route (BridgeCommandHandler.kt:1658-1712 checks only a named `package`;
 * BridgeSafetyManager.kt:291-310 asks only about /tap_text, /type, /tap, /long_press), so the relay
 * refuses them: an intent must name its app (a package, or a component whose package is checked).
 */
describe('Device Control intents', () => {
  let relay: TestRelay;
  let phone: PhoneSim;
  beforeAll(async () => {
    relay = await startRelay();
    phone = await startSim(relay, { mode: 'app', currentApp: 'com.android.launcher3' });
  });
  afterAll(async () => {
    phone.stop();
    await relay.close();
  });
  const commands = () => phone.received.filter((f) => f.type === 'bridge.command').map((f) => f.payload.path);
  const decisions = () =>
    readEvents(relay.home)
      .filter((e) => e.type === 'bridge.safety_decided')
      .map((e) => e.data);
  const PAY = 'venmo://paycharge?txn=pay&recipients=mallory&amount=100&note=rent';

  it('an intent or broadcast that names no app is refused: 403 bridge.implicit_intent, recorded, nothing reaches the phone', async () => {
    const before = decisions().length;
    const probes: Array<[string, Record<string, unknown>]> = [
      ['/send_intent', { action: 'android.intent.action.VIEW', data: PAY }],
      ['/send_intent', { action: 'android.intent.action.VIEW', data: 'https://venmo.com/u/mallory', category: 'android.intent.category.BROWSABLE' }],
      ['/broadcast', { action: 'com.venmo.ACTION', extras: { amount: '100' } }],
    ];
    for (const [path, body] of probes) {
      const res = await fetch(`${relay.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${phone.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(403);
      const answer = await res.json();
      expect(answer).toMatchObject({
        ok: false,
        code: 'bridge.implicit_intent',
        reason: 'implicit_intent',
        error: expect.stringMatching(/name the app.*package or component/),
      });
      expect(answer).not.toHaveProperty('reasonPhrase');
      // android_tool.py:1635/1671 turn a 403 into {"error": str(HTTPError)}, which python requests builds from the status
      // line alone ("403 Client Error: <reason phrase> for url: ..."): the phrase is what the agent reads.
      expect(res.statusText).toMatch(/implicit intent refused.*package or component/i);
    }
    expect(commands()).toEqual([]);
    const written = decisions().slice(before);
    expect(written.map((d) => [d.decision, d.path])).toEqual([
      ['implicit_intent', '/send_intent'],
      ['implicit_intent', '/send_intent'],
      ['implicit_intent', '/broadcast'],
    ]);
    // The intent's data (a payment link) never enters the log.
    expect(JSON.stringify(readEvents(relay.home))).not.toContain('paycharge');
  });

  it('a named package and a component’s package are both checked against the blocklist', async () => {
    const r = await dc(relay, phone.token!, 'POST', '/send_intent', {
      action: 'android.intent.action.VIEW',
      package: 'com.android.chrome',
      component: 'com.venmo/.MainActivity',
      data: PAY,
    });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ code: 'bridge.blocked_package', package: 'com.venmo' });
    expect((await dc(relay, phone.token!, 'POST', '/broadcast', { action: 'com.venmo.ACTION', package: 'com.venmo' })).body.code).toBe(
      'bridge.blocked_package',
    );
    expect(commands()).toEqual([]);
    // Named apps off the blocklist still work: the host tool's own examples with their app named (android_tool.py:1598-1607).
    const maps = await dc(relay, phone.token!, 'POST', '/send_intent', {
      action: 'android.intent.action.VIEW',
      data: 'google.navigation:q=1600+Amphitheatre+Parkway',
      package: 'com.google.android.apps.maps',
    });
    expect(maps.status).toBe(200);
    const main = await dc(relay, phone.token!, 'POST', '/send_intent', {
      action: 'android.intent.action.MAIN',
      component: 'com.example/com.example.MainActivity',
    });
    expect(main.status).toBe(200);
    expect((await dc(relay, phone.token!, 'POST', '/broadcast', { action: 'com.example.PING', package: 'com.example' })).status).toBe(200);
    expect(commands()).toEqual(['/send_intent', '/send_intent', '/broadcast']);
  });

  it('after the refusals nothing opened, so a tap goes to the app in front; with a blocklisted app in front a tap is refused', async () => {
    expect((await dc(relay, phone.token!, 'POST', '/tap', { x: 540, y: 1800 })).status).toBe(200);
    // The foreground gate reads what the phone last reported (the app reports at once on a change of its own
    // toggles and every 30 s otherwise: BridgeStatusReporter.kt:104,139), and the app checks its live foreground
    // against its own blocklist before every command (BridgeCommandHandler.kt:626-636).
    phone.reportStatus({ currentApp: 'com.venmo' });
    await until(() => relay.loop.models.bridge.device(phone.tokenPrefix!)?.currentApp === 'com.venmo');
    const tap = await dc(relay, phone.token!, 'POST', '/tap', { x: 540, y: 1800 });
    expect(tap).toMatchObject({ status: 403, body: { code: 'bridge.blocked_package', package: 'com.venmo' } });
    expect(commands().filter((p) => p === '/tap')).toHaveLength(1);
  });
});
