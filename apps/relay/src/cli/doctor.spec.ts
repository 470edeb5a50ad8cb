import { secureLinkChecks } from './doctor';

describe('doctor: Secure Link and Reach checks from /health', () => {
  it('off, running (pin and days), changed identity, broken, and Reach states', () => {
    expect(secureLinkChecks({ enabled: false })).toEqual([{ id: 'secure-link', status: 'ok', summary: expect.stringContaining('off') }]);
    const far = new Date(Date.now() + 400 * 86_400_000).toISOString();
    const ok = secureLinkChecks({
      enabled: true,
      status: 'available',
      url: 'https://10.0.0.5:9443',
      identity: { pin_sha256: 'sha256/abc=', not_after: far },
    });
    expect(ok[0]).toMatchObject({ status: 'ok', summary: expect.stringMatching(/sha256\/abc=.*(399|400) more days/) });
    const soon = secureLinkChecks({
      enabled: true,
      status: 'available',
      identity: { not_after: new Date(Date.now() + 5 * 86_400_000).toISOString() },
    });
    expect(soon[0]).toMatchObject({ status: 'warn', fix: expect.stringContaining('renew') });
    const changed = secureLinkChecks({
      enabled: true,
      status: 'available',
      identity_changed_at: '2026-11-24T00:00:00.000Z',
      identity: { not_after: far },
    });
    expect(changed[0]).toMatchObject({ status: 'warn', fix: expect.stringContaining('pair') });
    expect(secureLinkChecks({ enabled: true, status: 'unavailable', last_error: 'port 9443 on 0.0.0.0 is in use' })[0]).toMatchObject({
      status: 'error',
      summary: expect.stringContaining('port 9443'),
      fix: expect.stringContaining('preflight'),
    });
    const reach = secureLinkChecks({
      enabled: true,
      status: 'available',
      identity: { not_after: far },
      reach: { enabled: true, state: 'backoff', last_error: 'the broker refused: unauthorized' },
    });
    expect(reach[1]).toMatchObject({ id: 'reach', status: 'warn', summary: expect.stringContaining('unauthorized') });
    expect(secureLinkChecks({ enabled: false, reach: { enabled: true, state: 'unavailable', last_error: 'x' } })[1]).toMatchObject({
      id: 'reach',
      status: 'error',
    });
  });
});
