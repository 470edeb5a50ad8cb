import { nextCode, Phone, readEvents, registerCode, startRelay, type TestRelay } from '../support/harness';

/**
 * A pairing code that does not pair tells the phone which it was and what to do next (PROTOCOL.md, Pairing):
 * the status the app and desktop CLI act on stays (`auth.fail`, `code: invalid_credentials`, close 4401),
 * the `reason` they show and `code_state` say expired, used or unknown.
 */
describe('pairing refusals over a real socket', () => {
  let relay: TestRelay;
  beforeEach(async () => {
    relay = await startRelay();
  });
  afterEach(async () => {
    await relay.close();
  });

  const refusal = async (code: string) => {
    const phone = await Phone.connect(relay.url);
    const fail = await phone.auth({ pairing_code: code, device_id: 'late-phone', device_name: 'Late phone' });
    expect(await phone.closed).toBe(4401);
    expect(fail).toMatchObject({ type: 'auth.fail', payload: { code: 'invalid_credentials' } });
    return fail.payload as { reason: string; code: string; code_state: string };
  };

  it('used: says the code was already used and to mint a new one', async () => {
    const code = nextCode();
    await registerCode(relay, code);
    const first = await Phone.connect(relay.url);
    expect((await first.auth({ pairing_code: code, device_id: 'first' })).type).toBe('auth.ok');
    const fail = await refusal(code);
    expect(fail.code_state).toBe('used');
    expect(fail.reason).toMatch(/^Pairing code already used .*mint a new one/);
    first.close();
  });

  it('expired: before the sweep wrote its expiry and after; unknown: never registered', async () => {
    const early = nextCode();
    const late = nextCode();
    await registerCode(relay, early);
    relay.clock.advanceSeconds(300);
    await registerCode(relay, late);
    relay.clock.advanceSeconds(300);
    await relay.sweep(); // `early` is swept; `late` has 5 minutes left
    expect(readEvents(relay.home).filter((e) => e.type === 'pairing.code_expired')).toHaveLength(1);
    const swept = await refusal(early);
    expect(swept.code_state).toBe('expired');
    expect(swept.reason).toMatch(/^Pairing code expired .*10 minutes.*mint a new one/);
    relay.clock.advanceSeconds(300); // `late` is past its ten minutes, no sweep yet
    expect((await refusal(late)).code_state).toBe('expired');
    const unknown = await refusal('ZZZZ99');
    expect(unknown).toMatchObject({
      code_state: 'unknown',
      reason: expect.stringMatching(/^Unknown pairing code: check each character, or mint a new one/),
    });
    // The log keeps why for the operator; never the code.
    const failures = readEvents(relay.home).filter((e) => e.type === 'auth.failed');
    expect(failures.map((e) => e.data.reason)).toEqual(['expired pairing code', 'expired pairing code', 'unknown pairing code']);
    expect(JSON.stringify(failures)).not.toContain(early);
  });

  it('a relay restarted from its log still knows a used code was used', async () => {
    const code = nextCode();
    await registerCode(relay, code);
    const first = await Phone.connect(relay.url);
    expect((await first.auth({ pairing_code: code, device_id: 'first' })).type).toBe('auth.ok');
    first.close();
    relay = await relay.restart();
    expect((await refusal(code)).code_state).toBe('used');
  });

  it('each refusal still counts towards the bad-code limit (10 in 60 s blocks the address)', async () => {
    const code = nextCode();
    await registerCode(relay, code);
    relay.clock.advanceSeconds(601);
    for (let i = 0; i < 10; i++) expect((await refusal(code)).code_state).toBe('expired');
    await expect(Phone.connect(relay.url)).rejects.toMatchObject({ status: 429 });
  });
});
