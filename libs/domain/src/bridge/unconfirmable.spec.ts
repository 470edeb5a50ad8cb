import { bridgeStatusReported, sessionCreated } from '../../../../test/support/events';
import { Given, T0 } from '../../../../test/support/given';
import { planCommand } from './bridge';
import { DEFAULT_SAFETY_SETTINGS } from './safety';

/*
 * The app asks its user about a /tap or /long_press only when it can read the node's text: its gate takes
 * the text from the node a nodeId names and lets a point through unasked (BridgeCommandHandler.kt:2117-2129).
 * A destructive label the caller gives with coordinates could therefore be confirmed by nobody on such a
 * phone: the relay refuses it, in the log, instead of recording that "the phone asks its user".
 */
const P = 'cccc3333';
// The phone's own app confirms (its idle expiry too), as the unmodified app announces.
const models = () =>
  new Given().apply([
    sessionCreated({ tokenPrefix: P, grants: { bridge: null } }),
    bridgeStatusReported({
      tokenPrefix: P,
      currentApp: 'com.android.messaging',
      autoDisableAt: null,
      autoDisableBy: 'phone',
    }),
  ]).models;
const plan = (path: string, body: Record<string, unknown>, confirmBy: 'phone' | 'relay' = 'phone') =>
  planCommand(
    models(),
    { requestId: 'r1', tokenPrefix: P, method: 'POST', path, body, params: {}, confirmTimeoutSeconds: 30, confirmBy },
    DEFAULT_SAFETY_SETTINGS,
    T0,
  );

describe('a destructive gesture nobody could confirm', () => {
  it('is refused at coordinates on a phone whose app confirms, with the verb and no command sent', () => {
    for (const path of ['/tap', '/long_press']) {
      const out = plan(path, { x: 500, y: 900, text: 'Send' });
      expect(out.map((e) => e.type)).toEqual(['bridge.safety_decided']);
      expect(out[0].data).toMatchObject({ decision: 'unconfirmable', verb: 'send', path });
    }
  });

  it('goes to the phone to be asked when it names a node the app reads', () => {
    for (const body of [
      { nodeId: 'n12', text: 'Send' },
      { node_id: 'n12', text: 'Send' },
    ]) {
      const out = plan('/long_press', body);
      expect(out.map((e) => e.type)).toEqual(['bridge.safety_decided', 'bridge.command_sent']);
      expect(out[0].data).toMatchObject({ decision: 'confirmation_requested', by: 'phone', verb: 'send' });
    }
  });

  it('is unchanged where someone can ask: the relay confirms, or nothing destructive is said', () => {
    expect(plan('/tap', { x: 500, y: 900, text: 'Send' }, 'relay')[0].data).toMatchObject({ decision: 'confirmation_requested', by: 'relay' });
    expect(plan('/tap', { x: 500, y: 900, text: 'Settings' })[0].data).toMatchObject({ decision: 'allow' });
    expect(plan('/tap', { x: 500, y: 900 })[0].data).toMatchObject({ decision: 'allow' });
    // The app reads /tap_text's own text: asked on the phone as before.
    expect(plan('/tap_text', { text: 'Send' })[0].data).toMatchObject({ decision: 'confirmation_requested', by: 'phone' });
  });
});
