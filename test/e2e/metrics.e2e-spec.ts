import * as fs from 'node:fs';
import * as path from 'node:path';
import { bearer, pairPhone, startRelay, type TestRelay } from '../support/harness';
import { call, REMOTE, operatorFetch } from '../support/http';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

const scrape = async (relay: TestRelay) => {
  const r = await fetch(`${relay.url}/metrics`);
  return { status: r.status, type: r.headers.get('content-type'), text: await r.text() };
};
const value = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('GET /metrics (issue 16): Prometheus text on loopback, no secret or name in any label', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay();
  });
  afterAll(() => relay.close());

  it('counts requests by route template, sockets, durable events and their commit time, media bytes; loopback only', async () => {
    const { phone, token } = await pairPhone(relay, { device: { device_name: 'Ana’s secret Pixel', device_id: 'dev-private-42' } });
    const file = path.join(relay.home, 'workspace', 'photo-of-private-thing.bin');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, Buffer.alloc(4096, 7));
    const reg = await call(relay, 'POST', '/media/register', { path: file, content_type: 'application/octet-stream' });
    expect(reg.status).toBe(200);
    const got = await fetch(`${relay.url}/media/${reg.body.token}`, { headers: bearer(token) });
    expect((await got.arrayBuffer()).byteLength).toBe(4096);
    await call(relay, 'GET', '/sessions', undefined, { ...REMOTE, ...bearer(token) });
    const m = await scrape(relay);
    expect(m.status).toBe(200);
    expect(m.type).toContain('text/plain');
    expect(value(m.text, 'svc_http_requests_total{method="GET",route="/media/:token",status="200"}')).toBe(1);
    expect(value(m.text, 'svc_http_requests_total{method="GET",route="/sessions",status="200"}')).toBeGreaterThanOrEqual(1);
    expect(value(m.text, 'svc_phone_sockets{state="authenticated"}')).toBe(1);
    expect(value(m.text, 'svc_media_bytes_served_total{via="token"}')).toBe(4096);
    expect(value(m.text, 'svc_events_appended_total{type="session.created"}')).toBe(1);
    expect(value(m.text, 'svc_event_commit_seconds_count')).toBeGreaterThan(3);
    expect(m.text).toContain('svc_process_cpu_seconds_total');
    expect(m.text).toContain('svc_terminal_shells 0');
    expect(m.text).toMatch(/^svc_event_log_last_seq\{store="file"\} [1-9]\d*$/m);
    // Never a token, a code, a device name or a path in a label.
    for (const secret of [token, token.slice(0, 8), reg.body.token, 'Ana', 'dev-private-42', 'photo-of-private-thing', relay.home])
      expect(m.text).not.toContain(secret);
    phone.close();
    expect((await call(relay, 'GET', '/metrics', undefined, REMOTE)).status).toBe(403);
  });
});
