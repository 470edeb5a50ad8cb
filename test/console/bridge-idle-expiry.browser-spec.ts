import type { Locator, Page } from 'playwright-core';
import type { PhoneSim } from '../../apps/phone-sim/src/phone-sim';
import { startRelay, type TestRelay } from '../support/harness';
import { startSim } from '../support/bridge';
import { ensureConsoleBuilt, launchBrowser, launchWatchedPage, shot, signIn } from './browser';

jest.setTimeout(60_000);

/**
 * The Bridge page says who switches Device Control off when it is idle: for the app (which keeps its own idle
 * expiry and drops the relay's bridge.master_disabled) the phone's minutes, never a relay deadline; for a phone that
 * honours bridge.master_disabled, the relay's deadline as before.
 */
describe('console Bridge page: whose idle expiry', () => {
  let relay: TestRelay;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  const sims: PhoneSim[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    ensureConsoleBuilt();
    relay = await startRelay();
    ({ browser, page } = await launchWatchedPage(pageErrors));
    await signIn(page, relay);
  });
  afterAll(async () => {
    await page?.goto('about:blank');
    for (const s of sims) s.stop();
    await browser?.close();
    await relay?.close();
  });

  it("shows the app's own idle minutes instead of a relay deadline, and the relay's deadline for a phone that honours it", async () => {
    const app = await startSim(relay, { mode: 'app', deviceName: 'Pixel app', autoDisableMinutes: 20, statusTickMs: 0 });
    const legacy = await startSim(relay, { deviceName: 'Legacy phone', autoDisableMinutes: 45 });
    sims.push(app, legacy);
    await page.goto(`${relay.url}/console/bridge`);
    const row = (s: PhoneSim) => page.locator(`[data-testid="bridge-devices"] tr[data-prefix="${s.tokenPrefix}"]`);
    await row(legacy).waitFor();
    await expectText(row(app), /the phone switches Device Control off after 20 min idle/);
    expect(await row(app).innerText()).not.toMatch(/auto-off/);
    await expectText(row(legacy), /auto-off in 45 min/);
    await page.screenshot({ animations: 'disabled', path: shot('bridge-idle-expiry'), fullPage: true });
    expect(pageErrors).toEqual([]);
  });
});

async function expectText(locator: Locator, re: RegExp, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last = ((await locator.innerText().catch(() => '')) ?? '').replace(/\s+/g, ' ');
    if (re.test(last)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`expected ${re} in: ${last}`);
}
