import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import type { BrowserContext, Page } from 'playwright-core';
import { CLOSE } from '../../apps/relay/src/phone-socket/envelope';
import { pairPhone, readEvents, startRelay, type TestRelay } from '../support/harness';
import { dc, startSim } from '../support/bridge';
import { solidPng } from '../support/png';
import { ensureConsoleBuilt, launchBrowser, launchWatchedPage, shot, signIn } from './browser';
import { operatorFetch } from '../support/http';
import { freePort } from '../support/ports';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

jest.setTimeout(60_000);

describe('operator console in headless chromium', () => {
  let relay: TestRelay;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    ensureConsoleBuilt();
    // A fixed port, so the last test can restart the relay under the page's feet.
    // The terminal page needs a shell that stays open: the fixture bash, not the user's login shell (which
    // may be nologin) or its rc files.
    relay = await startRelay({
      env: { RELAY_PORT: String(await freePort()), PHONE_ENABLED: '1' },
      config: { terminalShell: path.join(__dirname, '../fixtures/bash-norc') },
    });
    ({ browser, context, page } = await launchWatchedPage(pageErrors));
    await signIn(page, relay);
  });
  afterAll(async () => {
    await browser?.close();
    await relay?.close();
  });

  const url = (p = '') => `${relay.url}/console/${p}`;

  it('renders the overview with the relay status bar', async () => {
    await page.goto(url());
    await page.getByTestId('overview-stats').waitFor();
    await page.getByText('No phones paired yet.').waitFor();
    await expectText(page.getByTestId('chain-status'), /chain ✓ #\d+/);
    await expectText(page.locator('.stream-pill'), /live/);
    const bar = await page.locator('.topbar').innerText();
    expect(bar).toContain('TLS off');
    expect(bar).toContain(`127.0.0.1:${relay.port}`);
    await page.screenshot({ animations: 'disabled', path: shot('overview-empty'), fullPage: true });
    expect(pageErrors).toEqual([]);
  });

  it('shows a phone paired by the harness live, without a reload', async () => {
    await nav(page, 'Devices').click();
    await page.getByText('No phones paired yet').first().waitFor();
    const marker = await page.evaluate('window.marker = Math.random()');
    const { prefix } = await pairPhone(relay, {
      device: { device_name: 'Pixel 9 of Ada', device_id: 'ada-pixel', device_platform: 'android' },
      terms: { transport_hint: 'tailscale' },
    });
    const row = page.locator(`tr[data-prefix="${prefix}"]`);
    await row.waitFor();
    await expectText(row, /Pixel 9 of Ada/);
    await expectText(row, /online/);
    await expectText(row, /Plain \(on tailscale\)/);
    expect(await page.evaluate('window.marker')).toBe(marker);
    await pairPhone(relay, {
      device: { device_name: 'Work iPhone', device_id: 'work-iphone', device_platform: 'ios' },
      terms: { ttl_seconds: 86400, grants: { bridge: false, desktop: false } },
    });
    await page.locator('tr[data-prefix]').nth(1).waitFor();
    await expectText(page.getByTestId('phones-online'), /2 phones online/);
    await page.screenshot({ animations: 'disabled', path: shot('devices'), fullPage: true });
  });

  it('shortens a session from its dialog (reduction only)', async () => {
    const row = page.locator('tr[data-prefix]', { hasText: 'Work iPhone' });
    await row.getByRole('button', { name: 'Shorten Work iPhone' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Session lifetime').selectOption({ label: '1 hour from now' });
    await dialog.getByLabel('terminal grant').selectOption('remove');
    await page.screenshot({ animations: 'disabled', path: shot('devices-shorten') });
    await dialog.getByRole('button', { name: 'Apply' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await expectText(row, /in (1h|59 min)/); // the test relay's clock stands still while the browser's runs
    const e = readEvents(relay.home)
      .filter((x) => x.type === 'session.shortened')
      .at(-1)!;
    expect(e.actor).toBe('operator');
    expect(Object.keys(e.data.grants as object)).not.toContain('terminal');
  });

  it('opens the Shorten dialog with a clean form each time', async () => {
    const dialog = page.getByRole('dialog');
    await page.getByRole('button', { name: 'Shorten Pixel 9 of Ada' }).click();
    await dialog.getByLabel('Session lifetime').selectOption({ label: '1 hour from now' });
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('button', { name: 'Shorten Work iPhone' }).click();
    expect(await dialog.getByLabel('Session lifetime').inputValue()).toBe('keep');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
  });

  it("shows each device's renewal and ends it from its dialog, keeping the session", async () => {
    await nav(page, 'Devices').click();
    const row = page.locator('tr[data-prefix]', { hasText: 'Pixel 9 of Ada' });
    await expectText(row.getByTestId('renewal'), /until (179|180)d.*0 renewals/s);
    await row.getByRole('button', { name: 'End renewal of Pixel 9 of Ada' }).click();
    const dialog = page.getByRole('dialog');
    await expectText(dialog, /keeps its current session until it/);
    await page.screenshot({ animations: 'disabled', path: shot('devices-end-trust') });
    await page.getByTestId('confirm-end-trust').click();
    await dialog.waitFor({ state: 'hidden' });
    await expectText(row.getByTestId('renewal'), /none/);
    expect(await row.getByRole('button', { name: 'End renewal of Pixel 9 of Ada' }).count()).toBe(0);
    const ended = readEvents(relay.home)
      .filter((e) => e.type === 'trust.ended')
      .at(-1)!;
    expect(ended).toMatchObject({ actor: 'operator', data: { deviceId: 'ada-pixel', reason: 'operator', by: 'operator' } });
    expect(await row.count()).toBe(1);
    expect(JSON.stringify(await page.content())).not.toMatch(/refreshDigest":\s*"[A-Za-z0-9_-]{8}/);
  });

  it('revokes from the console: the phone socket closes and the event shows in the log view', async () => {
    const { phone, prefix } = await pairPhone(relay, { device: { device_name: 'Old tablet', device_id: 'old-tablet' } });
    const row = page.locator(`tr[data-prefix="${prefix}"]`);
    await row.waitFor();
    await row.getByRole('button', { name: 'Revoke Old tablet' }).click();
    const dialog = page.getByRole('dialog');
    await expectText(dialog, /Old tablet/);
    await page.screenshot({ animations: 'disabled', path: shot('devices-revoke-confirm') });
    await page.getByTestId('confirm-revoke').click();
    expect(await withTimeout(phone.closed, 5000)).toBe(CLOSE.revoked);
    await row.waitFor({ state: 'detached' });
    const revoked = readEvents(relay.home)
      .filter((e) => e.type === 'session.revoked')
      .at(-1)!;
    expect(revoked).toMatchObject({ actor: 'operator', data: { tokenPrefix: prefix } });

    await nav(page, 'Events').click();
    const logRow = page.locator('tr[data-type="session.revoked"]').first();
    await logRow.waitFor();
    await expectText(logRow, new RegExp(`session ${prefix} revoked by operator`));
    await page.screenshot({ animations: 'disabled', path: shot('events'), fullPage: true });

    await logRow.click();
    const json = page.getByTestId('event-json');
    await expectText(json, new RegExp(`"tokenPrefix": "${prefix}"`));
    await page.screenshot({ animations: 'disabled', path: shot('events-drawer') });
    await page.keyboard.press('Escape');
    await json.waitFor({ state: 'detached' });
  });

  it('filters the log by device and pauses the live tail', async () => {
    const { phone, prefix } = await pairPhone(relay, { device: { device_name: 'Filter phone', device_id: 'filter-phone' } });
    await page.getByTestId('device-filter').fill(prefix);
    await page.getByTestId('device-filter').press('Enter');
    await page.waitForURL(new RegExp(`device=${prefix}`));
    await page.locator('tr[data-type="session.created"]').waitFor();
    const types = await page.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-type')));
    expect(types.length).toBeGreaterThan(0);
    expect(types).not.toContain('relay.started');

    await page.getByTestId('pause').click();
    phone.close();
    await expectText(page.getByTestId('pause'), /Resume \(1 new\)/);
    expect(await page.locator('tr[data-type="phone.disconnected"]').count()).toBe(0);
    await page.screenshot({ animations: 'disabled', path: shot('events-paused') });
    await page.getByTestId('pause').click();
    await page.locator('tr[data-type="phone.disconnected"]').waitFor();
  });

  it('a filter set from the drawer fills the device box and ends a pause', async () => {
    await page.goto(url('events'));
    const created = page.locator('tr[data-type="session.created"]').first();
    await created.waitFor();
    expect(await page.getByTestId('device-filter').inputValue()).toBe('');
    await page.getByTestId('pause').click();
    await created.click();
    await page.getByRole('button', { name: "Only this device's events" }).click();
    await page.waitForURL(/device=/);
    const device = new URL(page.url()).searchParams.get('device');
    expect(await page.getByTestId('device-filter').inputValue()).toBe(device);
    expect(await page.getByTestId('pause').getAttribute('aria-pressed')).toBe('false');
  });

  it('mints a code whose QR, read back from a screenshot, is the JSON the app scans (and the pairing URL wraps it)', async () => {
    await nav(page, 'Pairing').click();
    await page.getByText('No pending requests').waitFor();
    await page.screenshot({ animations: 'disabled', path: shot('pairing-form'), fullPage: true });
    await page.getByTestId('mint').click();
    const qr = page.getByTestId('pairing-qr');
    await qr.waitFor();
    const pairingUrl = await page.getByTestId('pairing-url').inputValue();
    expect(pairingUrl).toMatch(/^svc-relay:\/\/pair\?payload=[A-Za-z0-9_-]+$/);
    const png = PNG.sync.read(await qr.screenshot());
    const decoded = jsQR(new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length), png.width, png.height);
    const code = await page.getByTestId('pairing-code').innerText();
    expect(code).toMatch(/^[A-Z0-9]{6}$/);
    // app QrPairingScanner.kt parseHermesPairingQr: raw JSON with a top-level host and relay {url, code}.
    const qr_json = decoded?.data ?? '';
    expect(JSON.parse(qr_json)).toMatchObject({ host: expect.any(String), key: expect.any(String), relay: { code } });
    expect(Buffer.from(pairingUrl.slice(pairingUrl.indexOf('=') + 1), 'base64url').toString('utf8')).toBe(qr_json);
    await expectText(page.locator('.status-banner'), /Waiting for the phone · expires in (9:\d\d|10:00)/);
    await page.screenshot({ animations: 'disabled', path: shot('pairing-minted'), fullPage: true });
  });

  it('approves a pending public pairing request', async () => {
    const res = await fetch(`${relay.url}/pairing`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ device_name: "Grace's phone" }),
    });
    const req = (await res.json()) as { request_id: string };
    const item = page.locator(`li[data-request="${req.request_id}"]`);
    await item.waitFor();
    await page.screenshot({ animations: 'disabled', path: shot('pairing-pending'), fullPage: true });
    await item.getByRole('button', { name: 'Approve' }).click();
    await item.waitFor({ state: 'detached' });
    const approved = readEvents(relay.home).find((e) => e.type === 'pairing.approved' && e.data.requestId === req.request_id);
    expect(approved?.actor).toBe('operator');
  });

  it('shows bridge phones, their commands and the safety decisions; makes another phone active', async () => {
    const a = await startSim(relay, { deviceName: 'Bridge Pixel' });
    const b = await startSim(relay, { deviceName: 'Bridge Tablet' });
    try {
      expect((await dc(relay, a.token!, 'GET', '/ping')).status).toBe(200);
      expect((await dc(relay, a.token!, 'POST', '/open_app', { package: 'com.paypal.android.p2pmobile' })).status).toBe(403);
      await nav(page, 'Bridge').click();
      await page.locator(`[data-testid="bridge-devices"] tr[data-prefix="${b.tokenPrefix}"]`).waitFor();
      await expectText(page.getByTestId('bridge-activity'), /GET \/ping\s+http\s+200/);
      await expectText(page.locator('.safety-list'), /blocked package.*com\.paypal\.android\.p2pmobile/);
      await page.screenshot({ animations: 'disabled', path: shot('bridge'), fullPage: true });
      const row = page.locator(`[data-testid="bridge-devices"] tr[data-prefix="${b.tokenPrefix}"]`);
      await row.getByRole('button', { name: 'Make active' }).click();
      await expectText(row, /active/);
      await row.getByRole('button', { name: 'Make active' }).waitFor({ state: 'detached' });
      const sel = readEvents(relay.home)
        .filter((e) => e.type === 'bridge.active_selected')
        .at(-1)!;
      expect(sel).toMatchObject({ actor: 'operator', data: { tokenPrefix: b.tokenPrefix } });
    } finally {
      a.stop();
      b.stop();
    }
  });

  it('shows Threads (queued messages) and Terminal (open shells)', async () => {
    const posted = await fetch(`${relay.url}/phone/message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ chat_id: 'ops', title: 'Nightly backup', text: 'Backup finished: 12 GB in 4 min.' }),
    });
    expect(posted.status).toBeLessThan(300);
    await nav(page, 'Threads').click();
    await page.getByText('Nightly backup').first().waitFor();
    await page.getByText('no phone subscribed').waitFor();
    await page.screenshot({ animations: 'disabled', path: shot('threads'), fullPage: true });

    const { phone } = await pairPhone(relay, { device: { device_name: 'Shell phone', device_id: 'shell-phone' } });
    phone.send('terminal', 'terminal.attach', { cols: 100, rows: 30 });
    await phone.type('terminal', 'terminal.attached', 5000);
    await nav(page, 'Terminal').click();
    const shells = page.getByTestId('terminal-shells');
    await shells.waitFor();
    await expectText(shells, /attached/);
    await page.screenshot({ animations: 'disabled', path: shot('terminal'), fullPage: true });
    phone.close();
    await expectText(shells, /detached/);
  });

  it('lists registered media with type, size, expiry and fetches', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-console-media-'));
    const file = path.join(dir, 'build-report.txt');
    fs.writeFileSync(file, 'all green\n'.repeat(100));
    const res = await fetch(`${relay.url}/media/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ path: file, content_type: 'text/plain', sensitive: true }),
    });
    expect(res.status).toBe(200);
    await nav(page, 'Media').click();
    const table = page.getByTestId('media-table');
    await expectText(table, /build-report\.txt sensitive/);
    await expectText(table, /text\/plain/);
    await page.screenshot({ animations: 'disabled', path: shot('media'), fullPage: true });
  });

  it('previews a registered PNG inline from its Preview button; non-images have none', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-console-preview-'));
    const file = path.join(dir, 'screen-capture.png');
    fs.writeFileSync(file, solidPng(64, 40));
    const res = await fetch(`${relay.url}/media/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ path: file }),
    });
    expect(res.status).toBe(200);
    const table = page.getByTestId('media-table');
    const row = table.locator('tr', { hasText: 'screen-capture.png' });
    const button = row.getByRole('button', { name: 'Preview' });
    await button.waitFor();
    expect(await table.locator('tr', { hasText: 'build-report.txt' }).getByRole('button', { name: 'Preview' }).count()).toBe(0);
    // Keyboard: the button takes focus and opens on Enter.
    await button.focus();
    await page.keyboard.press('Enter');
    const img = page.getByTestId('media-preview').getByRole('img', { name: 'screen-capture.png' });
    await img.waitFor({ state: 'visible' });
    expect(await img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth)).toBe(64);
    expect(await img.getAttribute('src')).toMatch(/^\/console\/api\/media\/[A-Za-z0-9_-]{8}\/preview$/);
    expect(await row.getByRole('button', { name: 'Hide preview' }).getAttribute('aria-expanded')).toBe('true');
    await page.screenshot({ animations: 'disabled', path: shot('media-preview'), fullPage: true });
    expect(pageErrors).toEqual([]);
    await row.getByRole('button', { name: 'Hide preview' }).click();
    await page.getByTestId('media-preview').waitFor({ state: 'detached' });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('is usable on a narrow window and in the dark theme', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(url('devices'));
    await page.locator('tr[data-prefix]').first().waitFor();
    await page.screenshot({ animations: 'disabled', path: shot('narrow-devices'), fullPage: true });
    await page.goto(url());
    await page.getByTestId('overview-stats').waitFor();
    await page.screenshot({ animations: 'disabled', path: shot('narrow-overview'), fullPage: true });
    // Wide: the ticker becomes a rail beside the page.
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto(url());
    await page.getByTestId('overview-stats').waitFor();
    await page.locator('.ticker .event-item').first().waitFor();
    const bg = await page.evaluate('getComputedStyle(document.body).backgroundColor');
    expect(bg).toBe('rgb(12, 16, 22)');
    await page.screenshot({ animations: 'disabled', path: shot('overview-dark'), fullPage: true });
    await page.goto(url('pairing'));
    await page.getByTestId('mint').waitFor();
    await page.screenshot({ animations: 'disabled', path: shot('pairing-dark'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('is reachable by keyboard: skip link, nav and dialogs', async () => {
    await page.goto(url());
    await page.getByTestId('overview-stats').waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Skip to content');
    await page.goto(url('devices'));
    const revoke = page.getByRole('button', { name: /^Revoke / }).first();
    await revoke.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('dialog').waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
  });

  it('refuses cross-site requests from another page in the browser', async () => {
    // A page on another origin (a different port is a different origin) trying to reach the console.
    const evil = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>evil</title>'));
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    const evilUrl = `http://127.0.0.1:${(evil.address() as { port: number }).port}/`;
    try {
      const sessionsBefore = (await (await fetch(`${relay.url}/console/api/sessions`)).json()) as { sessions: Array<{ token_prefix: string }> };
      const target = sessionsBefore.sessions[0].token_prefix;
      const evilPage = await context.newPage();
      await evilPage.goto(evilUrl);
      const results = await evilPage.evaluate(
        async ({ api, target }) => {
          const out: string[] = [];
          // A simple cross-site POST (no preflight): the relay sees the foreign Origin and refuses it.
          await fetch(`${api}/sessions/${target}/revoke`, {
            method: 'POST',
            mode: 'no-cors',
            headers: { 'content-type': 'text/plain' },
            body: '{}',
          }).then(
            () => out.push('sent'),
            () => out.push('blocked'),
          );
          const r = await fetch(`${api}/overview`).then(
            () => 'read',
            () => 'unreadable',
          );
          out.push(r);
          const es = await new Promise<string>((resolve) => {
            const s = new EventSource(`${api}/stream`);
            s.onopen = () => (s.close(), resolve('open'));
            s.onerror = () => (s.close(), resolve('refused'));
          });
          out.push(es);
          return out;
        },
        { api: `${relay.url}/console/api`, target },
      );
      expect(results).toEqual(['sent', 'unreadable', 'refused']);
      await evilPage.close();
      const after = (await (await fetch(`${relay.url}/console/api/sessions`)).json()) as { sessions: Array<{ token_prefix: string }> };
      expect(after.sessions.map((s) => s.token_prefix)).toContain(target);
      expect(relay.logs.join('')).not.toContain('"statusCode":500');
      // And the same refusals seen directly: a foreign Host, a proxy header.
      const refused: Array<Record<string, string>> = [
        { host: 'attacker.example' },
        { 'x-forwarded-for': '198.51.100.7' },
        { origin: evilUrl.slice(0, -1) },
      ];
      for (const headers of refused) {
        expect(await rawStatus(`${relay.url}/console/`, headers)).toBe(403);
        expect(await rawStatus(`${relay.url}/console/api/overview`, headers)).toBe(403);
      }
    } finally {
      evil.close();
    }
  });

  it('shows a banner while the relay is down, then resumes from its last seq: nothing missed, nothing doubled', async () => {
    // The page's timers on Playwright's clock (at real speed from here on): the clock moves past the banner's
    // 2 s and, once the relay is back, the stream's retry backoff (live-stream.ts: 1 s doubling to 15 s)
    // instead of waiting them out.
    await page.clock.install();
    await page.goto(url('events'));
    await page.locator('tr[data-type="relay.started"]').waitFor();
    const before = relay.loop.lastSeq;
    await relay.close('browser test restart');
    // The banner shows once the stream has been down 2 s (stream-banner.tsx), by the page's clock.
    await page.clock.fastForward(2_000);
    await page.getByTestId('stream-banner').waitFor({ timeout: 10_000 });
    await page.screenshot({ animations: 'disabled', path: shot('stream-down') });
    relay = await relay.restart();
    // While away: relay.stopping and a new relay.started; then something new once back.
    const banner = page.getByTestId('stream-banner');
    const deadline = Date.now() + 15_000;
    while ((await banner.count()) > 0 && Date.now() < deadline) {
      await page.clock.fastForward(15_000);
      await banner.waitFor({ state: 'detached', timeout: 1_000 }).catch(() => undefined);
    }
    await banner.waitFor({ state: 'detached', timeout: 1_000 });
    const { phone } = await pairPhone(relay, { device: { device_name: 'After restart', device_id: 'after-restart' } });
    await relay.loop.drain();
    const head = relay.loop.lastSeq;
    expect(head).toBeGreaterThan(before + 2);
    await page.locator(`tbody tr:has(button[aria-label="Event ${head} details"])`).waitFor();
    const seqs = (await page.locator('tbody tr td:first-child button').allInnerTexts()).map(Number);
    expect(seqs).toEqual(Array.from({ length: head }, (_, i) => head - i));
    phone.close();
    expect(pageErrors.filter((e) => !/Failed to load resource|ERR_CONNECTION_REFUSED|EventSource/.test(e))).toEqual([]);
  });
});

function nav(page: Page, name: string) {
  return page.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name, exact: true });
}

async function expectText(locator: import('playwright-core').Locator, re: RegExp, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last = ((await locator.innerText().catch(() => '')) ?? '').replace(/\s+/g, ' ');
    if (re.test(last)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`expected ${re} in ${JSON.stringify(last)}`);
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms))]);
}

function rawStatus(target: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(target, { headers }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .on('error', reject);
  });
}
