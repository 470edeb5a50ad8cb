import * as os from 'node:os';
import * as path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { pairPhone, Phone, readEvents, startRelay, type TestRelay } from '../support/harness';
import { ensureConsoleBuilt, launchBrowser, launchWatchedPage, shot, signIn } from './browser';
import { operatorFetch } from '../support/http';
import { freePort } from '../support/ports';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

jest.setTimeout(60_000);

/** The operator's actions where the facts are (issue 24), in Debian's chromium against real relays. */
describe('console actions in headless chromium', () => {
  let relay: TestRelay;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    ensureConsoleBuilt();
    relay = await startRelay({ env: { PHONE_ENABLED: '1' }, config: { terminalShell: path.join(__dirname, '../fixtures/bash-norc') } });
    ({ browser, page } = await launchWatchedPage(pageErrors));
    await signIn(page, relay);
  });
  afterAll(async () => {
    await browser?.close();
    await relay?.close();
  });

  const url = (p = '') => `${relay.url}/console/${p}`;
  const lastEvent = (type: string) =>
    readEvents(relay.home)
      .filter((e) => e.type === type)
      .at(-1);

  it('a rate-limit block shows on the Overview and on Pairing; Unblock lifts it and the log says so in words', async () => {
    await page.goto(url());
    await page.getByTestId('overview-stats').waitFor();
    expect(await page.getByTestId('blocks-flag').count()).toBe(0);
    // Ten wrong pairing codes from 127.0.0.9: a real phone socket each, refused, then the address is blocked.
    for (let i = 0; i < 10; i++) {
      const p = await Phone.connect(relay.url, { localAddress: '127.0.0.9' });
      expect((await p.auth({ pairing_code: 'WRONG1' })).type).toBe('auth.fail');
      await p.closed;
    }
    const flag = page.getByTestId('blocks-flag');
    await expectText(flag, /1 address blocked by the rate limiter/);
    await shots(page, 'actions-overview-blocked');

    await flag.getByRole('link', { name: 'Review on Pairing →' }).click();
    const row = page.locator('li[data-address="127.0.0.9"]');
    await expectText(row, /127\.0\.0\.9 bad pairing codes blocked (just now|\d+s ago) · lifts by itself in (1:[0-5]\d|2:00)/);
    await shots(page, 'actions-pairing-blocked');

    await row.getByRole('button', { name: 'Unblock 127.0.0.9' }).click();
    await row.waitFor({ state: 'detached' });
    await page.getByText('No address is blocked').waitFor();
    expect(lastEvent('ratelimit.cleared')).toMatchObject({ actor: 'operator', data: { ip: '127.0.0.9', reason: 'unblocked by the operator' } });
    // The address may pair again at once.
    const again = await Phone.connect(relay.url, { localAddress: '127.0.0.9' });
    again.close();

    await nav(page, 'Events').click();
    const logRow = page.locator('tr[data-type="ratelimit.cleared"]').first();
    await expectText(logRow, /rate-limit block on 127\.0\.0\.9 lifted \(unblocked by the operator\)/);
    await expectText(
      page.locator('tr[data-type="ratelimit.blocked"]').first(),
      /127\.0\.0\.9 blocked until \d\d:\d\d:\d\d after too many bad pairing codes/,
    );
    await page.goto(url());
    await page.getByTestId('overview-stats').waitFor();
    expect(await page.getByTestId('blocks-flag').count()).toBe(0);
    expect(pageErrors).toEqual([]);
  });

  it('Events: family filters for every family, and every row in words', async () => {
    await page.goto(url('events'));
    const chips = page.getByRole('group', { name: 'Event family' });
    for (const label of ['Sessions & renewal', 'Voice', 'Profiles', 'Desktop', 'Secure Link & Reach', 'Auth & blocks', 'Relay']) {
      await chips.getByRole('button', { name: label, exact: true }).waitFor();
    }
    await chips.getByRole('button', { name: 'Auth & blocks', exact: true }).click();
    await page.waitForURL(/type=auth\.%2Cratelimit\./);
    await page.locator('tr[data-type="auth.failed"]').first().waitFor();
    const types = await page.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-type') ?? ''));
    expect(types.every((t) => t.startsWith('auth.') || t.startsWith('ratelimit.') || t.startsWith('console.'))).toBe(true);
    await chips.getByRole('button', { name: 'All', exact: true }).click();
    await page.locator('tr[data-type="relay.started"]').waitFor();
    const texts = await page.locator('tbody tr td:nth-child(4)').allInnerTexts();
    expect(texts.length).toBeGreaterThan(10);
    for (const t of texts) expect(t).not.toMatch(/^\s*\{|no words for it/);
    await shots(page, 'actions-events');
  });

  it('Devices: a phone that left shows when it went offline', async () => {
    const { phone, prefix } = await pairPhone(relay, { device: { device_name: 'Left phone', device_id: 'left-phone' } });
    await page.goto(url('devices'));
    const seen = page.locator(`tr[data-prefix="${prefix}"]`).getByTestId('seen');
    await expectText(seen, /online/);
    phone.close();
    await expectText(seen, /offline since (just now|\d+s ago)/);
  });

  it('Devices: a renewal that outlived its session is listed and ended as the operator', async () => {
    const { phone, prefix } = await pairPhone(relay, {
      terms: { ttl_seconds: 3600 },
      device: { device_name: 'Hour phone', device_id: 'hour-phone' },
    });
    phone.close();
    relay.clock.advanceSeconds(3601);
    await relay.sweep();
    await page.goto(url('devices'));
    const row = page.getByTestId('renewals-without-session').locator('tr[data-device="hour-phone"]');
    await expectText(row, new RegExp(`hour-phone last session ${prefix} \\(expired\\)`));
    await expectText(row.getByTestId('renewal'), /until 179d.*0 renewals/s);
    await shots(page, 'actions-devices');
    await row.getByRole('button', { name: 'End renewal of hour-phone' }).click();
    const dialog = page.getByRole('dialog');
    await expectText(dialog, /hour-phone has no live session/);
    await page.getByTestId('confirm-end-device-trust').click();
    await dialog.waitFor({ state: 'hidden' });
    await row.waitFor({ state: 'detached' });
    expect(lastEvent('trust.ended')).toMatchObject({ actor: 'operator', data: { deviceId: 'hour-phone', reason: 'operator' } });
  });

  it('Terminal: End shell hangs it up, the phone is told, the log names the operator', async () => {
    const { phone, prefix } = await pairPhone(relay, { device: { device_name: 'Shell phone', device_id: 'shell-phone' } });
    phone.send('terminal', 'terminal.attach', { cols: 100, rows: 30, session_name: 'build' }, 'a1');
    const attached = await phone.next((f) => f.id === 'a1');
    await page.goto(url('terminal'));
    const row = page.getByTestId('terminal-shells').locator('tr', { hasText: 'build' });
    await expectText(row, /attached/);
    await shots(page, 'actions-terminal');
    await row.getByRole('button', { name: `End shell build of ${prefix}` }).click();
    const dialog = page.getByRole('dialog');
    await expectText(dialog, /The phone showing it is told the shell was ended/);
    await page.getByTestId('confirm-end-shell').click();
    const told = await phone.next((f) => f.type === 'terminal.detached', 5000);
    expect(told.payload).toMatchObject({ session_name: 'build', reason: 'killed' });
    await row.waitFor({ state: 'detached' });
    expect(() => process.kill(attached.payload.pid as number, 0)).toThrow();
    expect(lastEvent('terminal.closed')).toMatchObject({ actor: 'operator', data: { sessionName: 'build', reason: 'killed' } });
    await nav(page, 'Events').click();
    await expectText(page.locator('tr[data-type="terminal.closed"]').first(), new RegExp(`shell build of ${prefix} ended by the operator`));
    phone.close();
  });

  it('Threads: a thread opens to its messages and replies', async () => {
    const { phone } = await pairPhone(relay, { device: { device_name: 'Reader phone', device_id: 'reader-phone' } });
    const posted = await fetch(`${relay.url}/phone/message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ chat_id: 'deploys', title: 'Deploy', text: 'Deploy 41 is live on staging.' }),
    });
    const { message_id } = (await posted.json()) as { message_id: string };
    phone.send('proactive', 'proactive.reply', { chat_id: 'deploys', text: 'Ship it to prod.', reply_to: message_id }, 'r1');
    await phone.type('proactive', 'proactive.reply.ok');
    await page.goto(url('threads'));
    await expectText(page.getByTestId('threads-state'), /no phone subscribed/);
    await page.getByRole('button', { name: 'Open thread Deploy' }).click();
    const dialog = page.getByRole('dialog', { name: 'Deploy' });
    const entries = dialog.getByTestId('thread-entries');
    await expectText(entries, /Deploy 41 is live on staging\..*Reader phone.*Ship it to prod\./s);
    expect(await entries.locator('li').evaluateAll((l) => l.map((x) => x.getAttribute('data-kind')))).toEqual(['message', 'reply']);
    await shots(page, 'actions-thread');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    // The log and ticker name the reply, never its words.
    await nav(page, 'Events').click();
    await expectText(page.locator('tr[data-type="phone.reply_received"]').first(), /Reader phone replied in chat deploys/);
    expect(await page.locator('main').innerText()).not.toContain('Ship it to prod.');
    phone.close();
  });

  it('Threads off: the page says PHONE_ENABLED is unset and what to set, and invites no message', async () => {
    const off = await startRelay();
    try {
      await signIn(page, off);
      await page.goto(`${off.url}/console/threads`);
      const state = page.getByTestId('threads-state');
      await expectText(state, /Threads is off on this relay\. The agent cannot message the phone: PHONE_ENABLED is not set/);
      await expectText(state, /set PHONE_ENABLED=1 in the relay's environment \(or in ~\/\.svc\/\.env\) and restart the relay/);
      const text = await page.locator('main').innerText();
      expect(text).not.toContain('Messages wait in the queue');
      expect(text).not.toContain('Queued messages');
      await page.goto(`${off.url}/console/`);
      await expectText(page.getByTestId('overview-stats'), /Threads off \(PHONE_ENABLED unset\)/);
      await page.goto(`${off.url}/console/threads`);
      await state.waitFor();
      await shots(page, 'actions-threads-off');
    } finally {
      // Away first, so the page's live stream does not keep dialling a relay that is gone.
      await page.goto('about:blank');
      await off.close();
    }
  });

  it('opened through a LAN address (or a foreign name), the console is a readable page saying it is loopback-only', async () => {
    const lan = Object.values(os.networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
    const open = await startRelay({ env: { RELAY_HOST: lan ? '0.0.0.0' : '127.0.0.1', RELAY_PORT: String(await freePort()) } });
    // A browser of its own, closed before the relay: chromium keeps a spare socket open to a host it was
    // refused by, and a relay stopping waits for open sockets (up to its 120 s connection timeout).
    const other = await launchBrowser();
    try {
      const lanPage = await other.context.newPage();
      // A LAN address is a non-loopback peer; `*.localhost` reaches loopback under a Host the console refuses.
      const targets = [...(lan ? [`http://${lan}:${open.port}/console/`] : []), `http://relay.localhost:${open.port}/console/`];
      for (const target of targets) {
        const res = await lanPage.goto(target);
        expect(res?.status()).toBe(403);
        await lanPage.getByRole('heading', { name: "The svc relay console answers only on the relay's own machine" }).waitFor();
        const text = await lanPage.locator('body').innerText();
        expect(text).toContain(`open http://127.0.0.1:${open.port}/console/`);
        expect(text).toContain(`ssh -L ${open.port}:127.0.0.1:${open.port}`);
      }
      await lanPage.screenshot({ animations: 'disabled', path: shot('actions-lan-refused'), fullPage: true });
      await lanPage.emulateMedia({ colorScheme: 'dark' });
      await lanPage.screenshot({ animations: 'disabled', path: shot('actions-lan-refused-dark'), fullPage: true });
    } finally {
      await other.close();
      await open.close();
    }
    expect(pageErrors).toEqual([]);
  });
});

/** The page in light and in dark, as an operator would look at it. */
async function shots(page: Page, name: string): Promise<void> {
  await page.emulateMedia({ colorScheme: 'light' });
  await page.screenshot({ animations: 'disabled', path: shot(name), fullPage: true });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.screenshot({ animations: 'disabled', path: shot(`${name}-dark`), fullPage: true });
  await page.emulateMedia({ colorScheme: 'light' });
}

function nav(page: Page, name: string) {
  return page.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name, exact: true });
}

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
