import { lanAddress } from '../../apps/relay/src/common/config/hosts';
import { svc } from '../support/cli';
import { startRelay, type TestRelay } from '../support/harness';
import { operatorFetch } from '../support/http';

/**
 * Issue 36.2: a relay bound to 127.0.0.1 mints QRs no phone can use. Wherever a code is shown (the pair
 * command, the mint answer the console and the host's pair command read) and in doctor, the relay says so
 * with the address phones would use. The console's Pairing page: test/console/words.browser-spec.ts.
 */
describe('a QR no phone can reach says so where the code is shown', () => {
  const lan = lanAddress();

  describe('a relay bound to 127.0.0.1', () => {
    let relay: TestRelay;
    let port: string;
    let expected: string;
    beforeAll(async () => {
      relay = await startRelay(); // RELAY_HOST=127.0.0.1
      port = new URL(relay.url).port;
      const wouldUse = lan ? `phones on this network would use ws://${lan}:${port}` : 'this machine has no LAN address right now';
      expected = `This QR points at 127.0.0.1: a phone cannot reach it. Start the relay with RELAY_HOST=0.0.0.0 (${wouldUse}`;
    });
    afterAll(async () => {
      await relay.close();
    });

    it('svc relay pair prints the warning beside the code, and --json carries it', async () => {
      const r = await svc(['relay', 'pair', '--no-qr'], { SVC_HOME: relay.home });
      expect(r.code).toBe(0);
      const lines = r.stdout.split('\n');
      const code = lines.findIndex((l) => /^ {2}code /.test(l));
      const warning = lines.findIndex((l) => l.startsWith('  warning   '));
      expect(warning).toBeGreaterThan(code);
      expect(warning - code).toBeLessThanOrEqual(2); // beside the code and the relay URL it is about
      expect(lines[warning]).toContain(expected);
      expect(lines[warning]).toContain('or serve phones through Secure Link or Reach.');
      const json = JSON.parse((await svc(['relay', 'pair', '--json'], { SVC_HOME: relay.home })).stdout) as { warning?: string };
      expect(json.warning).toContain(expected);
    });

    it('POST /pairing/mint (what the host and the console read) carries it; the Connectivity view the same words', async () => {
      const mint = await operatorFetch(`${relay.url}/pairing/mint`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(((await mint.json()) as { warning?: string }).warning).toContain(expected);
      const view = (await (await operatorFetch(`${relay.url}/console/api/connectivity`)).json()) as { listener: { phone_warning: string } };
      expect(view.listener.phone_warning).toContain(expected);
    });

    it('svc relay doctor warns with the same sentence (text and --json)', async () => {
      const env = { SVC_HOME: relay.home, RELAY_WEBAPI_URL: 'http://127.0.0.1:1' };
      const text = await svc(['relay', 'doctor'], env);
      expect(text.stdout).toMatch(new RegExp(`^warn  phone-reach +${expected.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'm'));
      const json = JSON.parse((await svc(['relay', 'doctor', '--json'], env)).stdout) as {
        checks: Array<{ id: string; status: string; summary: string }>;
      };
      expect(json.checks.find((c) => c.id === 'phone-reach')).toMatchObject({ status: 'warn', summary: expect.stringContaining(expected) });
    });
  });

  it('a relay on every interface: no warning where a LAN address exists, and doctor says where QRs send phones', async () => {
    const relay = await startRelay({ env: { RELAY_HOST: '0.0.0.0' } });
    try {
      const r = await svc(['relay', 'pair', '--no-qr'], { SVC_HOME: relay.home });
      expect(r.code).toBe(0);
      const doctor = JSON.parse(
        (await svc(['relay', 'doctor', '--json'], { SVC_HOME: relay.home, RELAY_WEBAPI_URL: 'http://127.0.0.1:1' })).stdout,
      ) as {
        checks: Array<{ id: string; status: string; summary: string }>;
      };
      const check = doctor.checks.find((c) => c.id === 'phone-reach');
      if (lan) {
        expect(r.stdout).not.toContain('warning');
        expect(check).toMatchObject({ status: 'ok', summary: `pairing QRs send phones to ws://${lan}:${new URL(relay.url).port}` });
      } else expect(check).toMatchObject({ status: 'warn', summary: expect.stringContaining('no LAN address') });
    } finally {
      await relay.close();
    }
  });
});
