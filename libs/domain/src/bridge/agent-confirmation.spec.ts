import { sessionCreated } from '../../../../test/support/events';
import { at, given, Given, T0 } from '../../../../test/support/given';
import { agentAnswered, agentQuestion, askAgent, type AgentAnswer } from './agent-confirmation';
import { expireConfirmations, planCommand, reportStatus, type BridgeStatusInput } from './bridge';
import { DEFAULT_SAFETY_SETTINGS } from './safety';

const P = 'aaaa1111';
const origin = { via: 'mcp' as const, client: 'claude-desktop' };
const status = (p: Partial<BridgeStatusInput> = {}): BridgeStatusInput => ({
  tokenPrefix: P,
  connId: `conn-${P}`,
  deviceId: `dev-${P}`,
  deviceName: 'Phone',
  screenOn: true,
  battery: 80,
  currentApp: 'com.android.launcher3',
  accessibilityEnabled: true,
  masterEnabled: true,
  deviceControlSupported: true,
  trustedVerbs: [],
  autoDisableMinutes: null,
  autoDisableBy: 'relay',
  ...p,
});
const phone = (p: Partial<BridgeStatusInput> = {}) => {
  const g = new Given().apply([sessionCreated({ tokenPrefix: P, grants: { bridge: null } })]);
  g.apply(reportStatus(g.models, status(p), 30, T0));
  return g;
};
const ask = { requestId: 'r1', tokenPrefix: P, method: 'POST', path: '/tap_text', verb: 'send', origin, timeoutSeconds: 60 };

describe('confirmation through the agent’s user', () => {
  it('asks only when the safety pipeline would: a destructive verb the phone does not trust', () => {
    const g = phone();
    expect(agentQuestion(g.models, { tokenPrefix: P, path: '/tap_text', body: { text: 'Send now' } }, DEFAULT_SAFETY_SETTINGS, T0)).toEqual({
      verb: 'send',
      text: 'Send now',
    });
    expect(agentQuestion(g.models, { tokenPrefix: P, path: '/send_sms', body: { to: '1', body: 'hi' } }, DEFAULT_SAFETY_SETTINGS, T0)?.verb).toBe(
      'send_sms',
    );
    expect(agentQuestion(g.models, { tokenPrefix: P, path: '/tap_text', body: { text: 'Settings' } }, DEFAULT_SAFETY_SETTINGS, T0)).toBeNull();
    // A refusal is no question: the pipeline refuses it without asking anyone.
    expect(
      agentQuestion(phone({ masterEnabled: false }).models, { tokenPrefix: P, path: '/send_sms', body: {} }, DEFAULT_SAFETY_SETTINGS, T0),
    ).toBeNull();
    expect(
      agentQuestion(
        phone({ trustedVerbs: ['send'] }).models,
        { tokenPrefix: P, path: '/tap_text', body: { text: 'Send' } },
        DEFAULT_SAFETY_SETTINGS,
        T0,
      ),
    ).toBeNull();
    expect(agentQuestion(g.models, { tokenPrefix: 'zzzz9999', path: '/send_sms', body: {} }, DEFAULT_SAFETY_SETTINGS, T0)).toBeNull();
  });

  it('the question is a pending confirmation asked by the MCP client, with its deadline, and the answer ends it once', () => {
    const g = phone();
    given(g)
      .when((m, now) => askAgent(m, ask, now))
      .then([
        {
          type: 'bridge.safety_decided',
          data: {
            decision: 'confirmation_requested',
            tokenPrefix: P,
            requestId: 'r1',
            method: 'POST',
            path: '/tap_text',
            verb: 'send',
            reason: '"send" is a destructive action: the MCP client "claude-desktop" asks its user before the phone is asked',
            by: 'mcp_client',
            deadline: at(T0, 60).toISOString(),
            via: 'mcp',
            client: 'claude-desktop',
          },
        },
      ]);
    expect(g.models.bridge.pendingConfirmation('r1')).toMatchObject({ verb: 'send', deadline: at(T0, 60).getTime() });
    given(g)
      .when((m) => agentAnswered(m, { requestId: 'r1', tokenPrefix: P, answer: 'allow', origin }))
      .then([
        {
          type: 'bridge.safety_decided',
          data: {
            decision: 'confirmation_allowed',
            tokenPrefix: P,
            requestId: 'r1',
            method: null,
            path: '/tap_text',
            verb: 'send',
            reason: 'the user of MCP client "claude-desktop" allowed "send" (the phone is asked next)',
            by: 'mcp_client',
            via: 'mcp',
            client: 'claude-desktop',
          },
        },
      ]);
    expect(g.models.bridge.pendingConfirmation('r1')).toBeUndefined();
    // A second answer, or a late one, changes nothing.
    given(g)
      .when((m) => agentAnswered(m, { requestId: 'r1', tokenPrefix: P, answer: 'deny', origin }))
      .then([]);
  });

  it.each<[AgentAnswer, string, string]>([
    ['deny', 'confirmation_denied', 'denied "send"'],
    ['dismiss', 'confirmation_denied', 'dismissed the question about "send"'],
    ['no_answer', 'confirmation_cancelled', 'could not ask its user about "send"'],
  ])('answer %s is recorded as %s', (answer, decision, reason) => {
    const g = phone();
    g.when((m, now) => askAgent(m, ask, now));
    const [e] = g.when((m) => agentAnswered(m, { requestId: 'r1', tokenPrefix: P, answer, origin }));
    expect(e.data).toMatchObject({ decision, by: 'mcp_client', client: 'claude-desktop', reason: expect.stringContaining(reason) });
  });

  it('silence past the deadline is a denial by the confirmation sweep, and the answer after it writes nothing', () => {
    const g = phone();
    g.when((m, now) => askAgent(m, ask, now));
    given(g)
      .when((m, now) => expireConfirmations(m, now), at(T0, 59))
      .then([]);
    const [timedOut] = g.when((m, now) => expireConfirmations(m, now), at(T0, 60));
    expect(timedOut.data).toMatchObject({ decision: 'confirmation_timed_out', requestId: 'r1' });
    given(g)
      .when((m) => agentAnswered(m, { requestId: 'r1', tokenPrefix: P, answer: 'allow', origin }))
      .then([]);
  });

  it('a phone gone before the question is no question', () => {
    const g = new Given().apply([sessionCreated({ tokenPrefix: P, grants: { bridge: null } })]);
    given(g)
      .when((m, now) => askAgent(m, ask, now))
      .then([]);
  });

  it('planCommand records how the command came on the decision and on the command sent; HTTP commands carry nothing', () => {
    const g = phone();
    const cmd = { requestId: 'r2', tokenPrefix: P, method: 'POST', path: '/tap', body: { x: 1, y: 2 }, params: {}, confirmTimeoutSeconds: 30 };
    const [decided, sent] = planCommand(g.models, { ...cmd, origin }, DEFAULT_SAFETY_SETTINGS, T0);
    expect(decided.data).toMatchObject({ decision: 'allow', via: 'mcp', client: 'claude-desktop' });
    expect(sent.data).toMatchObject({ path: '/tap', via: 'mcp', client: 'claude-desktop' });
    for (const e of planCommand(g.models, cmd, DEFAULT_SAFETY_SETTINGS, T0)) expect(e.data).not.toHaveProperty('via');
    g.apply([decided, sent]);
    expect(g.models.bridge.activity(1)[0]).toMatchObject({ requestId: 'r2', via: 'mcp', client: 'claude-desktop' });
    expect(g.models.bridge.safety()).toEqual([]); // a plain allow is not in the safety ring
    g.when((m, now) => askAgent(m, ask, now));
    expect(g.models.bridge.safety(1)[0]).toMatchObject({
      decision: 'confirmation_requested',
      by: 'mcp_client',
      via: 'mcp',
      client: 'claude-desktop',
    });
  });
});
