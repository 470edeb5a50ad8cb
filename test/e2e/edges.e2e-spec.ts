import { createHash, X509Certificate } from 'node:crypto';
import * as http from 'node:http';
import * as https from 'node:https';
import type * as net from 'node:net';
import * as tls from 'node:tls';
import { DashboardIngress, INGRESS_BASE } from '../../apps/relay/src/ingress/dashboard-ingress';
import { loadConfig } from '../../apps/relay/src/common/config/config';
import { ConfigError } from '../../apps/relay/src/common/config/config-env';
import { bearer, pairPhone, Phone, startRelay, type TestRelay } from '../support/harness';
import { call } from '../support/http';

type Seen = { path: string; headers: http.IncomingHttpHeaders };

/** A loopback upstream that records what reached it and answers with a hop-by-hop header of its own. */
async function upstream(onRequest?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ path: req.url ?? '', headers: req.headers });
    if (onRequest?.(req, res)) return;
    if (req.url === '/api/health') return res.end(JSON.stringify({ status: 'ok', auth_required: true }));
    res.writeHead(200, { 'content-type': 'application/json', connection: 'x-upstream-hop', 'x-upstream-hop': 'internal', 'x-kept': 'yes' });
    res.end(JSON.stringify({ path: req.url }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, seen, url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}` };
}

function pinnedAgent(pin: string, certDer: string): https.Agent {
  return new https.Agent({
    ca: `-----BEGIN CERTIFICATE-----\n${certDer.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`,
    checkServerIdentity: (host, cert) => {
      const spki = new X509Certificate(cert.raw).publicKey.export({ type: 'spki', format: 'der' });
      return `sha256/${createHash('sha256').update(spki).digest('base64')}` === pin ? tls.checkServerIdentity(host, cert) : new Error('pin');
    },
  });
}

function get(url: string, agent: http.Agent | undefined, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const mod = url.startsWith('https') ? https : http;
    const req = mod.request(url, { agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
}

const logLines = (relay: TestRelay) => relay.logs.map((l) => JSON.parse(l) as Record<string, unknown>);

describe('edges (issue items 13 and 14)', () => {
  describe('/relay/update-check never shows the feed URL credentials (item 13)', () => {
    let relay: TestRelay;
    let feed: Awaited<ReturnType<typeof upstream>>;
    let token: string;
    const BASIC = `Basic ${Buffer.from('feeduser:s3cret-pass').toString('base64')}`;
    beforeAll(async () => {
      feed = await upstream((req, res) => {
        if (req.url?.startsWith('/missing')) return Boolean(res.writeHead(404).end());
        if (req.headers.authorization !== BASIC) return Boolean(res.writeHead(401).end());
        res.end(JSON.stringify({ latest: '99.0.0', update_command: 'npm i -g svc' }));
        return true;
      });
      relay = await startRelay();
      const p = await pairPhone(relay);
      p.phone.close();
      token = p.token;
    });
    afterAll(async () => {
      await relay.close();
      feed.server.close();
    });
    const check = async (url: string) => {
      relay.config.updateFeedUrl = url;
      const r = await call(relay, 'GET', '/relay/update-check?refresh=1', undefined, bearer(token));
      expect(r.status).toBe(200);
      return r.body;
    };
    const SECRETS = /feeduser|s3cret-pass|t0ken-secret|sig-secret/;

    it('user:pass@ is sent as HTTP Basic (never in the URL) and the feed answers', async () => {
      const port = new URL(feed.url).port;
      expect(await check(`http://feeduser:s3cret-pass@127.0.0.1:${port}/feed.json?token=t0ken-secret`)).toMatchObject({
        status: 'behind',
        latest: '99.0.0',
      });
      expect(feed.seen.at(-1)).toMatchObject({ path: '/feed.json?token=t0ken-secret', headers: { authorization: BASIC } });
    });

    it('failures say what went wrong to a paired phone and to the log, never the userinfo or a query value', async () => {
      const port = new URL(feed.url).port;
      const closed = http.createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const dead = (closed.address() as net.AddressInfo).port;
      await new Promise((r) => closed.close(r));
      const unreachable = await check(`http://feeduser:s3cret-pass@127.0.0.1:${dead}/feed.json?token=t0ken-secret&sig=sig-secret`);
      expect(unreachable).toMatchObject({ status: 'unknown', error: 'update check failed: the feed could not be reached (ECONNREFUSED)' });
      const missing = await check(`http://127.0.0.1:${port}/missing?token=t0ken-secret`);
      expect(missing.error).toBe('update check failed: the feed answered 404');
      const refused = await check(`http://other:wrong@127.0.0.1:${port}/feed.json`);
      expect(refused.error).toBe('update check failed: the feed answered 401');
      for (const body of [unreachable, missing]) expect(JSON.stringify(body)).not.toMatch(SECRETS);
      const logged = logLines(relay).filter((l) => l.msg === 'update check failed');
      expect(logged.map((l) => l.feed)).toContain(`http://redacted@127.0.0.1:${dead}/feed.json?token=redacted&sig=redacted`);
      expect(relay.logs.join('')).not.toMatch(SECRETS);
    });

    it('a malformed feed URL at start is refused without echoing its credentials', () => {
      const bad = () => loadConfig({ RELAY_UPDATE_FEED_URL: 'ftp://feeduser:s3cret-pass@host/x?token=t0ken-secret' });
      expect(bad).toThrow(ConfigError);
      expect(bad).toThrow(/ftp:\/\/redacted@host\/x\?token=redacted/);
    });
  });

  describe('forwarders drop the headers a message names in Connection (item 14)', () => {
    let relay: TestRelay;
    let dash: Awaited<ReturnType<typeof upstream>>;
    beforeAll(async () => {
      dash = await upstream();
      relay = await startRelay({
        env: {
          RELAY_SECURE_LINK_ENABLED: '1',
          RELAY_SECURE_LINK_HOST: '127.0.0.1',
          RELAY_SECURE_LINK_PORT: '0',
          RELAY_SECURE_LINK_DASHBOARD_URL: dash.url,
        },
      });
    });
    afterAll(async () => {
      await relay.close();
      dash.server.close();
    });

    it("Secure Link /dashboard: `Connection: close, X-Secret-Thing` keeps X-Secret-Thing from the upstream, and the upstream's own from the client", async () => {
      const c = (await call(relay, 'GET', '/health')).body.secure_proxy;
      const r = await get(`${c.proxy.url}/dashboard/page`, pinnedAgent(c.proxy.pin_sha256, c.proxy.cert_der), {
        connection: 'close, X-Secret-Thing',
        'x-secret-thing': 'do-not-forward',
        'x-other': 'forwarded',
      });
      expect(r.status).toBe(200);
      const seen = dash.seen.find((s) => s.path === '/page')!;
      expect(seen.headers['x-secret-thing']).toBeUndefined();
      expect(seen.headers['x-other']).toBe('forwarded');
      expect(r.headers['x-upstream-hop']).toBeUndefined();
      expect(r.headers['x-kept']).toBe('yes');
    });

    it('the dashboard ingress: the same, both ways', async () => {
      // A stand-in for the relay behind the ingress records what the ingress passes on.
      const behind = await upstream();
      const ingress = new DashboardIngress({
        relayUrl: behind.url,
        authenticate: () => true,
        consumeTicket: () => false,
        allowedHosts: [],
        allowedOrigins: [],
      });
      const server = http.createServer((req, res) => void ingress.handle(req, res));
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      try {
        const base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}${INGRESS_BASE}`;
        const r = await get(`${base}/health`, undefined, {
          connection: 'keep-alive, X-Secret-Thing',
          'x-secret-thing': 'do-not-forward',
          'x-svc-relay-session': 'a-relay-session-token',
          'x-other': 'forwarded',
        });
        expect(r.status).toBe(200);
        const seen = behind.seen.find((x) => x.path === '/health')!;
        expect(seen.headers['x-secret-thing']).toBeUndefined();
        expect(seen.headers['x-other']).toBe('forwarded');
        expect(r.headers['x-upstream-hop']).toBeUndefined();
        expect(r.headers['x-kept']).toBe('yes');
      } finally {
        server.close();
        behind.server.close();
      }
    });
  });

  describe('log lines (item 14)', () => {
    let relay: TestRelay;
    beforeAll(async () => {
      relay = await startRelay();
    });
    afterAll(() => relay.close());

    it('a refusal logs one msg and a readable error code', async () => {
      const { phone, token } = await pairPhone(relay);
      phone.close();
      const r = await fetch(`${relay.url}/ping`, { headers: bearer(token) });
      expect(r.status).toBe(503);
      const raw = relay.logs.find((l) => l.includes('request refused: a peer is unavailable'))!;
      expect(raw.match(/"msg":/g)).toHaveLength(1);
      expect(JSON.parse(raw)).toMatchObject({ level: 40, code: 'bridge.no_device', reason: expect.any(String) });
    });

    it("a frame past the socket's maxPayload (close 1009) is the client's fault: a warning, never an error line", async () => {
      const { phone } = await pairPhone(relay);
      const before = relay.logs.length;
      phone.sendRaw(Buffer.alloc(16 * 1024 * 1024 + 1, 0x61).toString());
      expect(await phone.closed).toBe(1009);
      await new Promise((r) => setTimeout(r, 50));
      const after = relay.logs.slice(before).map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(after.filter((l) => (l.level as number) >= 50)).toEqual([]);
      expect(after.find((l) => String(l.msg).includes('WS_ERR_UNSUPPORTED_MESSAGE_LENGTH'))).toMatchObject({ level: 40 });
      // The relay serves on.
      const again = await Phone.connect(relay.url);
      again.close();
    });
  });
});
