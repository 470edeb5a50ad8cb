import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { listeningPorts, operatorChecks } from './doctor-operator';
import { secureLinkChecks } from './doctor-secure-link';

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

describe('doctor: the operator key and what loopback alone opens', () => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-doctor-'));
  const key = path.join(home, 'relay', 'operator.key');

  it('no key yet, a private key, a key others can read', () => {
    expect(operatorChecks(home, {}, new Set())[0]).toMatchObject({
      id: 'operator-key',
      status: 'warn',
      fix: expect.stringContaining('svc relay start'),
    });
    fs.mkdirSync(path.dirname(key), { recursive: true });
    fs.writeFileSync(key, 'k'.repeat(43) + '\n', { mode: 0o600 });
    expect(operatorChecks(home, {}, new Set())[0]).toMatchObject({ status: 'ok', summary: expect.stringContaining('mode 600') });
    fs.chmodSync(key, 0o644);
    expect(operatorChecks(home, {}, new Set())[0]).toMatchObject({ status: 'warn', fix: `chmod 600 ${key}` });
  });

  it('warns when a listener on 80 or 443 shares the host and trust is loopback; key mode is fine', () => {
    const trust = (env: NodeJS.ProcessEnv, ports: number[]) => operatorChecks(home, env, new Set(ports))[1];
    expect(trust({}, [22, 8767])).toMatchObject({ id: 'loopback-trust', status: 'ok', summary: expect.stringContaining('any caller on this host') });
    expect(trust({}, [443])).toMatchObject({
      status: 'warn',
      summary: expect.stringContaining('port 443'),
      fix: expect.stringContaining('RELAY_LOOPBACK_TRUST=key'),
    });
    expect(trust({ RELAY_LOOPBACK_TRUST: 'loopback' }, [80, 443])).toMatchObject({
      status: 'warn',
      summary: expect.stringContaining('port 80 and 443'),
    });
    expect(trust({ RELAY_LOOPBACK_TRUST: 'key' }, [80, 443])).toMatchObject({ status: 'ok' });
  });

  it('reads the listening ports off /proc', async () => {
    const net = await import('node:net');
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      expect(listeningPorts().has((server.address() as { port: number }).port)).toBe(true);
    } finally {
      server.close();
    }
  });
});
