import { DEVICE_CONTROL_ROUTES } from './device-control-routes';
import { screenHashOf, takesEvidence } from './evidence';

describe('evidence per action: which commands, and what a hash is', () => {
  it('the screen-changing POSTs under mcp (MCP only), all (HTTP too); none under off; never a read, /wait or the clipboard', () => {
    const acts = DEVICE_CONTROL_ROUTES.filter((r) => r.methods.includes('POST') && takesEvidence('all', 'POST', r.path, false)).map((r) => r.path);
    expect(acts).toEqual(
      expect.arrayContaining(['/tap', '/tap_text', '/type', '/swipe', '/press_key', '/open_app', '/send_intent', '/return_to_svc']),
    );
    for (const p of ['/screen', '/find_nodes', '/diff_screen', '/wait', '/clipboard', '/events/stream', '/setup', '/search_contacts'])
      expect(takesEvidence('all', 'POST', p, true)).toBe(false);
    expect(takesEvidence('all', 'GET', '/screenshot', true)).toBe(false);
    expect(takesEvidence('all', 'POST', '/return_to_hermes', false)).toBe(true);
    expect(takesEvidence('mcp', 'POST', '/tap', true)).toBe(true);
    expect(takesEvidence('mcp', 'POST', '/tap', false)).toBe(false);
    expect(takesEvidence('off', 'POST', '/tap', true)).toBe(false);
  });

  it('a hash is the app’s hex digest, lower-cased; anything else (a refusal, a number, junk, too long) is none', () => {
    expect(screenHashOf(200, { hash: 'ABCDEF0123456789' })).toBe('abcdef0123456789');
    expect(screenHashOf(404, { hash: 'abcdef0123456789' })).toBeNull();
    expect(screenHashOf(200, { hash: 42 })).toBeNull();
    expect(screenHashOf(200, { hash: 'not hex at all!' })).toBeNull();
    expect(screenHashOf(200, { hash: 'a'.repeat(129) })).toBeNull();
    expect(screenHashOf(200, {})).toBeNull();
  });
});
