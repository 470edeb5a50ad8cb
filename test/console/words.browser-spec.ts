import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import type { PhoneSim } from '../../apps/phone-sim/src/phone-sim';
import { lanAddress } from '../../apps/relay/src/common/config/hosts';
import { startSim } from '../support/bridge';
import { ensureBuilt } from '../support/dist';
import { pairPhone, startRelay, type TestRelay } from '../support/harness';
import { ensureConsoleBuilt, launchWatchedPage, shot, signIn } from './browser';

jest.setTimeout(90_000);

/**
 * Issue 36 in the console: a QR no phone can reach says so where the code is shown (36.2); the Store
 * page's commands run as written, and the clipboard holds what the page shows (36.6); the words of
 * Threads, Terminal, Voice, Media and Bridge (36.7).
 */
describe('console words', () => {
  let relay: TestRelay;
  let browser: Awaited<ReturnType<typeof launchWatchedPage>>['browser'];
  let page: Page;
  const pageErrors: string[] = [];
  const sims: PhoneSim[] = [];

  beforeAll(async () => {
    ensureConsoleBuilt();
    relay = await startRelay({ env: { PHONE_ENABLED: '1' } }); // bound to 127.0.0.1
    ({ browser, page } = await launchWatchedPage(pageErrors));
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: relay.url });
    await signIn(page, relay);
  });
  afterAll(async () => {
    await page?.goto('about:blank');
    for (const s of sims) s.stop();
    await browser?.close();
    await relay?.close();
  });

  it('Pairing: a minted QR that points at 127.0.0.1 says a phone cannot reach it, with the address it would use; Connectivity the same', async () => {
    const lan = lanAddress();
    const port = new URL(relay.url).port;
    const would = lan ? `phones on this network would use ws://${lan}:${port}` : 'this machine has no LAN address right now';
    await page.goto(`${relay.url}/console/pairing`);
    await page.getByTestId('mint').click();
    await page.getByTestId('pairing-code').waitFor();
    await expectText(
      page.getByTestId('qr-warning'),
      new RegExp(`^This QR points at 127\\.0\\.0\\.1: a phone cannot reach it\\. Start the relay with RELAY_HOST=0\\.0\\.0\\.0 \\(${esc(would)}\\)`),
    );
    await page.screenshot({ animations: 'disabled', path: shot('pairing-unreachable-qr'), fullPage: true });
    await page.goto(`${relay.url}/console/connectivity`);
    await expectText(page.getByTestId('phone-warning'), new RegExp(`^This QR points at 127\\.0\\.0\\.1: .*${esc(would)}`));
  });

  it('Store: each command runs as written in a shell without svc on PATH, and Copy puts exactly that text on the clipboard', async () => {
    ensureBuilt(); // bin/svc runs dist/
    await page.goto(`${relay.url}/console/store`);
    const commands = page.getByTestId('store-commands');
    const verify = commands.locator('li', { hasText: 'Verify the whole chain' });
    const shown = (await verify.locator('code').innerText()).trim();
    expect(shown).toMatch(/^SVC_HOME=\S+ \/\S+\/bin\/svc relay events verify --log \S+$/);
    await verify.getByRole('button', { name: 'Copy' }).click();
    await verify.getByRole('button', { name: 'Copied' }).waitFor();
    expect(
      await page.evaluate(() =>
        (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText(),
      ),
    ).toBe(shown);
    // As the operator would paste it: a shell in another directory, PATH without any svc.
    const out = execFileSync('/bin/sh', ['-c', shown], {
      cwd: os.tmpdir(),
      env: { PATH: '/usr/bin:/bin', HOME: os.homedir() },
      encoding: 'utf8',
    });
    expect(out).toMatch(/chain ok|verified|records/i);
  });

  it('Threads and Events call host messages the agent; Terminal names the device; Voice and Media say what they mean', async () => {
    const posted = await fetch(`${relay.url}/phone/message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ chat_id: 'ops', title: 'Nightly', text: 'done' }),
    });
    expect(posted.status).toBeLessThan(300);
    await page.goto(`${relay.url}/console/events`);
    const row = page.locator('[data-testid="events-table"] tr[data-type="phone.message_posted"]').first();
    await expectText(row, /\bagent\b/);
    expect(await row.innerText()).not.toMatch(/\boperator\b/);

    const { phone } = await pairPhone(relay, { device: { device_name: 'Shell phone', device_id: 'shell-phone-id' } });
    phone.send('terminal', 'terminal.attach', { cols: 80, rows: 24 });
    await phone.type('terminal', 'terminal.attached', 5000);
    await page.goto(`${relay.url}/console/terminal`);
    const shells = page.getByTestId('terminal-shells');
    await expectText(shells, /Shell phone/);
    expect(await shells.innerText()).not.toContain('shell-phone-id');
    phone.close();

    await page.goto(`${relay.url}/console/voice`);
    await expectText(page.getByTestId('voice-stats'), /Failed calls 0 no voice call yet/);
    expect(await page.getByTestId('voice-stats').innerText()).not.toContain('none yet');

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-words-media-'));
    fs.writeFileSync(path.join(dir, 'report.txt'), 'ok\n');
    const reg = await fetch(`${relay.url}/media/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ path: path.join(dir, 'report.txt'), content_type: 'text/plain' }),
    });
    expect(reg.status).toBe(200);
    await page.goto(`${relay.url}/console/media`);
    await expectText(page.getByTestId('media-source').first(), /^[A-Za-z0-9_-]{8} · registered by the agent host$/);
  });

  it('Bridge: with one phone and none made active, it says that phone gets every command', async () => {
    const sim = await startSim(relay, { deviceName: 'Only phone' });
    sims.push(sim);
    await page.goto(`${relay.url}/console/bridge`);
    await page.locator(`[data-testid="bridge-devices"] tr[data-prefix="${sim.tokenPrefix}"]`).waitFor();
    const stats = page.locator('.stat-grid').first();
    await expectText(stats, new RegExp(`Bridge phones 1 the only phone \\(${sim.tokenPrefix}\\) gets every command`));
    expect(await stats.innerText()).not.toContain('none active');
    await page.screenshot({ animations: 'disabled', path: shot('bridge-only-phone'), fullPage: true });
    expect(pageErrors).toEqual([]);
  });
});

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

async function expectText(locator: Locator, re: RegExp, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last = ((await locator.innerText().catch(() => '')) ?? '').replace(/\s+/g, ' ').trim();
    if (re.test(last)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`expected ${re} in ${JSON.stringify(last)}`);
}
