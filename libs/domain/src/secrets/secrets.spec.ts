import type { BridgeStatusReported } from '@svc/events';
import { bridgeStatusReported, sessionCreated } from '../../../../test/support/events';
import { Given, T0 } from '../../../../test/support/given';
import { planCommand } from '../bridge/bridge';
import { DEFAULT_SAFETY_SETTINGS } from '../bridge/safety';
import { checkSecretName, checkSecretValue, forgetSecret, scrubSecret, secretToType, setSecret } from './secrets';

const P = 'aaaa1111';
const phone = (p: Partial<BridgeStatusReported['data']> = {}) =>
  new Given().apply([sessionCreated({ tokenPrefix: P, grants: { bridge: null } }), bridgeStatusReported({ tokenPrefix: P, ...p })]);
const command = (secret?: string) => ({
  requestId: 'r1',
  tokenPrefix: P,
  method: 'POST',
  path: '/type',
  body: { text: 'Pay 1234 now' },
  params: {},
  confirmTimeoutSeconds: 30,
  confirmBy: 'relay' as const,
  ...(secret ? { secret } : {}),
});

describe('named secrets', () => {
  it('names are a short charset; values bounded, one line', () => {
    expect(checkSecretName('bank_pin-2')).toBe('bank_pin-2');
    for (const bad of ['', 'a'.repeat(41), 'a b', 'é', '../x', 'x\n', 3]) expect(() => checkSecretName(bad)).toThrow(/name is 1 to 40/);
    expect(checkSecretValue('x'.repeat(1024))).toHaveLength(1024);
    for (const bad of ['', 'x'.repeat(1025), 'a\nb', 'a\u0000b', 'a\u007fb', null]) expect(() => checkSecretValue(bad)).toThrow(/value/);
  });

  it('the safety pipeline decides on the value and records only the secret: a destructive word is asked under type_secret', () => {
    const plain = planCommand(phone().models, command(), DEFAULT_SAFETY_SETTINGS, T0);
    expect(plain[0].data).toMatchObject({ decision: 'confirmation_requested', verb: 'pay' });
    const masked = planCommand(phone().models, command('bank'), DEFAULT_SAFETY_SETTINGS, T0);
    expect(masked[0].data).toMatchObject({ decision: 'confirmation_requested', verb: 'type_secret' });
    expect(JSON.stringify(masked)).not.toMatch(/pay|Pay/);
    // The phone trusts the word: allowed, recorded under the secret's name, the word still unsaid.
    const trusted = planCommand(phone({ trustedVerbs: ['pay'] }).models, command('bank'), DEFAULT_SAFETY_SETTINGS, T0);
    expect(trusted.map((e) => e.type)).toEqual(['bridge.safety_decided', 'bridge.command_sent']);
    expect(trusted[0].data).toMatchObject({ decision: 'trusted_verb', verb: 'type_secret' });
    expect(trusted[1].data).toMatchObject({ secret: 'bank', shape: { text: 'string' } });
    expect(JSON.stringify(trusted)).not.toMatch(/pay|Pay/);
    // The blocklist refuses it as it refuses typing.
    const blocked = planCommand(phone({ currentApp: 'com.venmo' }).models, command('bank'), DEFAULT_SAFETY_SETTINGS, T0);
    expect(blocked[0].data).toMatchObject({ decision: 'blocked_package', package: 'com.venmo' });
  });

  it('a phone’s answer is scrubbed of the value, in keys and nested strings', () => {
    const v = 'Zq81';
    expect(scrubSecret({ error: `inspected "${v}"`, [v]: [{ deep: `${v}${v}` }], n: 3 }, v, 'pin')).toEqual({
      error: 'inspected "[the secret "pin"]"',
      '[the secret "pin"]': [{ deep: '[the secret "pin"][the secret "pin"]' }],
      n: 3,
    });
    let deep: unknown = { text: v };
    for (let i = 0; i < 40; i++) deep = [deep];
    expect(JSON.stringify(scrubSecret(deep, v, 'pin'))).not.toContain(v);
  });

  it('set, replace (forgetting the old keys), bounded count, forget; typing an unknown or forgotten name is refused', () => {
    const g = new Given();
    g.apply(setSecret(g.models, { name: 'a', value: 'one', keyIds: [] }, 2));
    expect(secretToType(g.models, 'a')).toBe('one');
    const replace = setSecret(
      g.models,
      { name: 'a', value: 'two', keyIds: ['secret-a:2026-03-01T12:0000aaaa', 'secret-ab:2026-03-01T12:0000bbbb'] },
      2,
    );
    expect(replace[1]).toEqual({
      type: 'personal.forgotten',
      data: { scope: 'secret', device: 'secret-a', before: null, keys: ['secret-a:2026-03-01T12:0000aaaa'] },
    });
    g.apply(setSecret(g.models, { name: 'b', value: 'x', keyIds: [] }, 2));
    expect(() => setSecret(g.models, { name: 'c', value: 'x', keyIds: [] }, 2)).toThrow(/holds 2 secrets already/);
    g.apply(forgetSecret(g.models, 'b', []));
    expect(() => secretToType(g.models, 'b')).toThrow(/no secret is named "b"/);
    expect(() => forgetSecret(g.models, 'b', [])).toThrow(/no secret is named "b"/);
  });
});
