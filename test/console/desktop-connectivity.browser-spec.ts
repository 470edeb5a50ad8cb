import * as fs from 'node:fs';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import type { Locator, Page } from 'playwright-core';
import { ManualClock } from '../../apps/relay/src/common/loop/clock';
import { ReachBroker } from '../../apps/relay/src/reach/broker';
import { newId, newToken, tokenSha256 } from '../../apps/relay/src/reach/protocol';
import { startRelay, tempHome, type TestRelay } from '../support/harness';
import { call } from '../support/http';
import { FakeDesktop } from '../support/desktop';
import { ensureConsoleBuilt, launchBrowser, launchWatchedPage, shot, signIn } from './browser';
import { freePort } from '../support/ports';

jest.setTimeout(60_000);

const ARGUMENT = 'ARGUMENT-SECRET-7731';
const RESULT = 'RESULT-PAYLOAD-9911';

/**
 * The Desktop and Connectivity pages as an operator sees them, against a real relay serving phones
 * through Secure Link and connected to a real Reach broker, with a desktop client on a real socket.
 */
describe('console Desktop and Connectivity pages in headless chromium', () => {
  let relay: TestRelay;
  let broker: ReachBroker;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    ensureConsoleBuilt();
    const dir = tempHome();
    const hostId = newId();
    const hostToken = newToken();
    const credentials = path.join(dir, 'credentials.json');
    fs.writeFileSync(credentials, JSON.stringify({ hosts: { [hostId]: { host_token_sha256: tokenSha256(hostToken) } } }));
    broker = new ReachBroker({
      credentialsFile: credentials,
      listen: '127.0.0.1',
      port: 0,
      logger: pino({ level: 'silent' }, new Writable({ write: (_c, _e, cb) => cb() })),
    });
    await broker.start();
    const home = tempHome();
    fs.mkdirSync(path.join(home, 'relay', 'secure-link'), { recursive: true });
    fs.writeFileSync(path.join(home, 'relay', 'secure-link', 'host-id'), `${hostId}\n`);
    relay = await startRelay({
      home,
      env: {
        RELAY_SECURE_LINK_ENABLED: '1',
        RELAY_SECURE_LINK_HOST: '127.0.0.1',
        RELAY_SECURE_LINK_PORT: '0',
        RELAY_EXPERIMENTAL_REACH_ENABLED: '1',
        RELAY_SECURE_LINK_BROKER_URL: `ws://127.0.0.1:${broker.port}`,
        RELAY_SECURE_LINK_BROKER_HOST_TOKEN: hostToken,
      },
      config: { desktop: { defaultMs: 400, computerUseMs: 600, adbMs: 800 } },
      reachBackoff: { baseMs: 50, maxMs: 200 },
      // The broker lives on the wall clock: the relay's expiry times must be real ones here.
      clock: new ManualClock(new Date().toISOString()),
    });
    await until(async () => (await call(relay, 'GET', '/health')).body.secure_link.reach.state === 'connected');
    ({ browser, page } = await launchWatchedPage(pageErrors));
    await signIn(page, relay);
  });
  afterAll(async () => {
    await browser?.close();
    await relay?.close();
    await broker?.close();
  });

  const url = (p = '') => `${relay.url}/console/${p}`;

  it('the top bar says Secure Link, and Connectivity shows its origin, pin, expiry, Reach and the routes a QR carries', async () => {
    const health = (await call(relay, 'GET', '/health')).body.secure_link;
    await page.goto(url());
    await expectText(page.getByTestId('transport'), /^Secure Link$/);
    expect(await page.locator('.topbar').innerText()).not.toContain('TLS off');
    await page.getByTestId('transport').click();
    await expectText(
      page.getByTestId('connectivity-headline'),
      /through Secure Link \(pinned TLS\) at https:\/\/127\.0\.0\.1:\d+, and through Reach/,
    );
    await expectText(page.getByTestId('secure-link-status'), /serving phones/);
    const sl = await page.getByTestId('secure-link').innerText();
    expect(sl).toContain(health.url);
    expect(sl).toContain(health.identity.pin_sha256);
    expect(sl).toMatch(/\d+ days left/);
    expect(sl).toContain('never: phones hold the pin they were paired with');
    await expectText(page.getByTestId('reach-state'), /connected/);
    expect(await page.getByTestId('reach').innerText()).toContain(`ws://127.0.0.1:${broker.port}`);
    const routes = page.getByTestId('routes');
    await expectText(routes.locator('tr[data-role="plugin_proxy"]'), new RegExp(`Secure Link preferred.*${escape(health.url)}.*pinned TLS`));
    await expectText(routes.locator('tr[data-role="outbound_broker"]'), /Reach \(experimental\).*one-use credential/);
    await expectText(routes.locator('tr[data-role="relay"]'), /loopback address: no phone can dial it/);
    await page.screenshot({ animations: 'disabled', path: shot('connectivity'), fullPage: true });
    expect(pageErrors).toEqual([]);
  });

  it('preflights a good host and a bad one, with each check in words', async () => {
    const port = await freePort();
    await page.getByTestId('preflight-host').fill('127.0.0.1');
    await page.getByTestId('preflight-port').fill(String(port));
    await page.getByTestId('preflight-run').click();
    const result = page.getByTestId('preflight-result');
    await page.locator('[data-testid="preflight-result"][data-verdict="ready"]').waitFor();
    await expectText(result, new RegExp(`Secure Link could serve phones there.*https://127\\.0\\.0\\.1:${port}`));
    await expectText(result.locator('li[data-check="port"]'), new RegExp(`✓.*port ${port} is free`));
    await expectText(result.locator('li[data-check="identity"]'), /✓.*the identity covers 127\.0\.0\.1/);
    await page.getByTestId('preflight-host').fill('203.0.113.7');
    await page.getByTestId('preflight-run').click();
    await page.locator('[data-testid="preflight-result"][data-verdict="problems"]').waitFor();
    await expectText(result.locator('li[data-check="address"]'), /✗.*203\.0\.113\.7 is not an address of this machine/);
    await expectText(result.locator('li[data-check="identity"]'), /✗.*pairing every phone again/);
    await expectText(result, /Every phone paired through Secure Link would have to pair again/);
    await page.screenshot({ animations: 'disabled', path: shot('connectivity-preflight'), fullPage: true });
    // A URL is not a host: the relay's refusal, in words.
    await page.getByTestId('preflight-host').fill('http://169.254.169.254/latest');
    await page.getByTestId('preflight-run').click();
    await expectText(page.locator('.preflight-form .inline-error'), /host must be an IP address or a DNS name/);
    // The browser logs the refused request itself; nothing else went wrong.
    expect(pageErrors).toEqual([expect.stringContaining('400 (Bad Request)')]);
    pageErrors.splice(0);
  });

  it('shows Reach losing its broker live, without a reload', async () => {
    const marker = await page.evaluate('window.marker = Math.random()');
    await broker.close();
    await expectText(page.getByTestId('reach-state'), /lost: reconnecting/, 10_000);
    await expectText(page.getByTestId('reach'), /Last change just now/);
    await expectText(page.getByTestId('connectivity-headline'), /^(?!.*through Reach)/);
    expect(await page.evaluate('window.marker')).toBe(marker);
  });

  it('Pairing says Secure Link, pre-selects 30 days, and the minted code names the Secure Link route', async () => {
    await nav(page, 'Pairing').click();
    await expectText(page.getByTestId('transport-hint'), /Secure Link \(pinned TLS\) serves phones: 30 days suggested/);
    expect(await page.locator('.mint-card').innerText()).not.toContain('Plain ws://');
    expect(await page.getByRole('radio', { name: '30 days' }).isChecked()).toBe(true);
    await page.getByTestId('mint').click();
    await page.getByTestId('pairing-code').waitFor();
    const health = (await call(relay, 'GET', '/health')).body.secure_link;
    await expectText(page.locator('.minted-info .facts'), new RegExp(`Secure Link ${escape(health.url)} pinned TLS, tried first`));
    await page.screenshot({ animations: 'disabled', path: shot('pairing-secure-link'), fullPage: true });
    await page.getByRole('button', { name: 'Discard' }).click();
  });

  it('Desktop: empty, then a client appears live with its workspace, editor and tools', async () => {
    await nav(page, 'Desktop').click();
    await page.getByText('No desktop client connected').waitFor();
    await page.getByTestId('desktop-no-grant').waitFor();
    await page.getByText('No tool calls yet').waitFor();
    await page.screenshot({ animations: 'disabled', path: shot('desktop-empty'), fullPage: true });
    const d = await FakeDesktop.pair(relay, { name: 'axiom-desktop' });
    await page.getByTestId('desktop-no-grant').waitFor({ state: 'detached' });
    d.workspace('/home/ana/src/relay');
    d.status();
    d.phone.send('desktop', 'active_editor', {
      version: 1,
      ts: 1,
      source: 'tmux',
      cwd: '/home/ana/src/relay',
      command: 'vim notes.txt',
      editor: 'vim',
    });
    const row = page.locator(`tr[data-device="${d.deviceId}"]`);
    await expectText(row, /axiom-desktop.*linux · v0\.9\.0/);
    await expectText(row.getByTestId('desktop-workspace'), /relay @ main.*\/home\/ana\/src\/relay.*1 staged · 2 modified · 0 untracked/);
    await expectText(row.getByTestId('desktop-editor'), /vim via tmux/);
    await expectText(row.getByTestId('desktop-tools'), /5 tools.*clipboard_read.*read_file.*search_files.*terminal.*write_file/);
    expect(await row.innerText()).not.toContain('notes.txt');

    d.onCommand(() => ({ ok: true, result: { text: RESULT } }));
    expect((await call(relay, 'POST', '/desktop/desktop_read_file', { path: `/home/ana/${ARGUMENT}.txt` })).status).toBe(200);
    d.onCommand(() => null);
    expect((await call(relay, 'POST', '/desktop/desktop_terminal', { command: `echo ${ARGUMENT}` })).status).toBe(504);
    const calls = page.getByTestId('desktop-calls');
    await expectText(
      calls.locator('tr[data-tool="desktop_read_file"]'),
      new RegExp(`desktop_read_file ok \\d+ ms ${d.deviceId} host \\(loopback\\)`),
    );
    await expectText(calls.locator('tr[data-tool="desktop_terminal"]'), /desktop_terminal timed out \d+ ms/);
    await expectText(page.locator('.stat-grid'), /Tool calls 2 0 in flight.*Failed calls 1/);
    const text = await page.locator('body').innerText();
    const html = await page.content();
    for (const secret of [ARGUMENT, RESULT]) {
      expect(text).not.toContain(secret);
      expect(html).not.toContain(secret);
    }
    await page.screenshot({ animations: 'disabled', path: shot('desktop'), fullPage: true });
    d.close();
    await row.waitFor({ state: 'detached' });
    await page.getByText('No desktop client connected').waitFor();
    expect(await calls.locator('tbody tr').count()).toBe(2); // the calls outlive the client
    // Leave one connected for the dark and narrow views.
    const again = await FakeDesktop.pair(relay, { name: 'axiom-desktop' });
    again.workspace('/home/ana/src/relay');
    again.status();
    await page.locator(`tr[data-device="${again.deviceId}"]`).waitFor();
    expect(pageErrors).toEqual([]);
  });

  it('both pages read in the dark theme and in a narrow window', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ animations: 'disabled', path: shot('desktop-dark'), fullPage: true });
    await nav(page, 'Connectivity').click();
    await page.getByTestId('secure-link').waitFor();
    await page.screenshot({ animations: 'disabled', path: shot('connectivity-dark'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [name, path] of [
      ['connectivity-narrow', 'connectivity'],
      ['desktop-narrow', 'desktop'],
    ]) {
      await page.goto(url(path));
      await page.locator('.page-head h1').waitFor();
      await page.locator('.card').first().waitFor();
      // Nothing wider than the window: no sideways scrolling of the page itself.
      expect(await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(0);
      await page.screenshot({ animations: 'disabled', path: shot(name), fullPage: true });
    }
    // On the narrow Desktop page the calls keep their result and duration in view, with no sideways scroll.
    const calls = page.getByTestId('desktop-calls');
    await expectText(calls.locator('tbody tr').first(), /desktop_terminal timed out \d+ ms/);
    expect(await calls.evaluate((t) => t.parentElement!.scrollWidth - t.parentElement!.clientWidth)).toBeLessThanOrEqual(0);
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(pageErrors).toEqual([]);
  });
});

function nav(page: Page, name: string) {
  return page.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name, exact: true });
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

async function expectText(locator: Locator, re: RegExp, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last = ((await locator.innerText().catch(() => '')) ?? '').replace(/\s+/g, ' ');
    if (re.test(last)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`expected ${re} in ${JSON.stringify(last)}`);
}

async function until(what: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}
