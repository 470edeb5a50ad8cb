import type { Page } from 'playwright-core';
import { startRelay, type TestRelay } from '../support/harness';
import { prunedHome, SMALL_SEGMENTS, type PrunedHome } from '../support/pruned-home';
import { ensureConsoleBuilt, launchWatchedPage, shot, signIn } from './browser';

jest.setTimeout(90_000);

/**
 * A relay started on a pruned home (issue 37.4): the Overview and the Store page show its chain verified
 * from the record after the cut, naming the cut's seq and time, never "broken at #1".
 */
describe('console chain monitor over a pruned log, in headless chromium', () => {
  let h: PrunedHome;
  let relay: TestRelay;
  let browser: Awaited<ReturnType<typeof launchWatchedPage>>['browser'];
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    ensureConsoleBuilt();
    h = await prunedHome();
    relay = await startRelay({ home: h.home, clock: h.clock, config: SMALL_SEGMENTS });
    ({ browser, page } = await launchWatchedPage(pageErrors));
    await signIn(page, relay);
  });
  afterAll(async () => {
    await browser?.close();
    await relay?.close();
  });

  it('the Overview says verified from the seq after the cut, with the cut', async () => {
    await page.goto(`${relay.url}/console/`);
    const from = page.getByTestId('overview-chain-from');
    await from.waitFor();
    expect(await from.innerText()).toMatch(
      new RegExp(`^from seq ${h.cut.seq + 1} \\(cut at seq ${h.cut.seq}, 2026-01-0[1-5] \\d\\d:\\d\\d:\\d\\d UTC\\) up to #`),
    );
    expect(await page.getByTestId('chain-status').innerText()).toContain('chain ✓');
    expect(pageErrors).toEqual([]);
  });

  it('the Store page says the same, and its full check proves the log from the cut', async () => {
    await page.goto(`${relay.url}/console/store`);
    const from = page.getByTestId('store-chain-from');
    await from.waitFor();
    expect(await from.innerText()).toContain(`from seq ${h.cut.seq + 1} (cut at seq ${h.cut.seq}, 2026-01-0`);
    await page.getByTestId('verify-start').click();
    const result = page.locator('[data-testid="verify-result"][data-state="verified"]');
    await result.waitFor();
    expect(await page.getByTestId('verify-result-from').innerText()).toContain(`from #${h.cut.seq + 1} (cut at seq ${h.cut.seq}`);
    await page.screenshot({ animations: 'disabled', path: shot('store-pruned-chain'), fullPage: true });
    expect(pageErrors).toEqual([]);
  });
});
