import type { Page } from 'playwright-core';
import type { MetricsView } from '@svc/console-api';
import { ManualClock } from '../../apps/relay/src/common/loop/clock';
import { pairPhone, startRelay, type Phone, type TestRelay } from '../support/harness';
import { operatorFetch } from '../support/http';
import { ensureConsoleBuilt, expectAttr, expectText, launchBrowser, launchWatchedPage, shot, signIn, strokePixels } from './browser';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

jest.setTimeout(90_000);

/**
 * Issue 36, item 4: the Metrics page's charts say what happened. The console's own requests are kept out
 * of "Requests by route family"; a lone interval with commits is a point and a quiet one reads "no
 * commits"; times follow the reader's locale (24 h in de-DE, 12 h in en-US), in the afternoon so the two differ.
 */
describe('console Metrics charts that do not mislead, in headless chromium', () => {
  let relay: TestRelay;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  const phones: Phone[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    ensureConsoleBuilt();
    relay = await startRelay({ clock: new ManualClock('2026-03-01T15:30:00.000Z') });
    ({ browser, page } = await launchWatchedPage(pageErrors, { locale: 'de-DE', timezoneId: 'UTC' }));
    // The page's timers on Playwright's clock, still running at real speed: `sample()` moves it past the
    // Metrics page's 2 s poll (get-metrics.ts) instead of waiting one out in real time for each sample.
    await page.clock.install();
    await signIn(page, relay);
  });
  afterAll(async () => {
    for (const p of phones) p.close();
    await browser?.close();
    await relay?.close();
  });

  const url = (p = '') => `${relay.url}/console/${p}`;
  const chart = (id: string) => page.locator(`[data-chart="${id}"]`);
  const api = async () => (await (await fetch(`${relay.url}/console/api/metrics`)).json()) as MetricsView;

  /** Moves the relay's clock one sampling interval and waits for the sample, and for the page to draw it. */
  async function sample(): Promise<void> {
    const before = (await api()).times.length;
    relay.clock.advanceSeconds(2);
    await relay.sweep();
    await page.clock.fastForward(2_000);
    await expectAttr(page.getByTestId('metrics-charts'), 'data-samples', String(before + 1));
  }

  it("keeps the console's own requests out of 'Requests by route family', with a note saying so", async () => {
    await page.goto(url('metrics'));
    await page.getByTestId('metrics-collecting').waitFor();
    // One interval: the console's own requests (the page's polling, and more), and a few health checks.
    await sample();
    for (let i = 0; i < 8; i++) await page.evaluate(`fetch('/console/api/overview').then((r) => r.json())`);
    for (let i = 0; i < 3; i++) await fetch(`${relay.url}/health`);
    await sample();
    const v = await api();
    const http = v.charts.find((c) => c.id === 'http')!;
    expect(http.series.map((s) => s.label)).toContain('health');
    expect(http.series.map((s) => s.label)).not.toContain('console');
    // More console requests than health checks in that interval: they would have been the top line.
    const newest = (values: Array<number | null>) => values.at(-1) ?? 0;
    expect(newest(http.apart!.values)).toBeGreaterThan(newest(http.series.find((s) => s.label === 'health')!.values));

    const legend = chart('http').locator('.u-legend');
    await expectText(legend, /health/);
    expect(await legend.innerText()).not.toMatch(/console/);
    await expectText(
      page.getByTestId('apart-http'),
      /^Not drawn: requests to \/console \(this console's own polling and scripts using its API\), [\d.]+\/s in the newest interval\.$/,
    );
    expect(pageErrors).toEqual([]);
  });

  it('draws a lone interval with commits as a point, and writes "no commits" where there were none', async () => {
    // Quiet, then commits (a phone pairs), then quiet: the commit interval has no neighbour to draw a line to.
    await sample();
    phones.push((await pairPhone(relay, { device: { device_name: 'Pixel', device_id: 'metrics-chart-phone' } })).phone);
    await sample();
    for (let i = 0; i < 4; i++) await sample();
    const commit = (await api()).charts.find((c) => c.id === 'commit')!;
    const p50 = commit.series.find((s) => s.label === 'p50')!.values;
    const lone = p50.findIndex((x, i) => x !== null && (p50[i - 1] ?? null) === null && (p50[i + 1] ?? null) === null && i > 1);
    expect(lone).toBeGreaterThan(0);
    expect(p50.at(-1)).toBeNull();

    const box = chart('commit').getByTestId('time-chart');
    await expectAttr(box, 'data-gap-labels', /^[1-9]\d*$/);
    await expectText(chart('commit').locator('.u-legend'), /p50 ?no commits ?p99 ?no commits/);
    // The point is drawn in the first line colour (the accent); a line through one value draws nothing.
    expect(await strokePixels(page, 'commit', '--accent')).toBeGreaterThan(10);
    await page.screenshot({ animations: 'disabled', path: shot('metrics-charts-de'), fullPage: true });
  });

  it("labels times in the reader's locale: 24 h in de-DE, 12 h in en-US", async () => {
    const ticks = await chart('commit').getByTestId('time-chart').getAttribute('data-time-ticks');
    expect(ticks).toMatch(/^15:3\d(:\d\d)?( \| 15:3\d(:\d\d)?)*$/);
    await expectText(chart('commit').locator('.u-legend .u-series').first(), /^time ?15:30:\d\d$/);

    const other = await launchWatchedPage(pageErrors, { locale: 'en-US', timezoneId: 'UTC' });
    try {
      await signIn(other.page, relay);
      await other.page.goto(url('metrics'));
      const box = other.page.locator('[data-chart="commit"]').getByTestId('time-chart');
      await expectAttr(box, 'data-time-ticks', /^3:3\d(:\d\d)?\sPM( \| 3:3\d(:\d\d)?\sPM)*$/);
      await expectText(other.page.locator('[data-chart="commit"] .u-legend .u-series').first(), /^time ?3:30:\d\d PM$/);
    } finally {
      await other.browser.close();
    }
    expect(pageErrors).toEqual([]);
  });

  it('shows the charts at 1280 and 390 px, light and dark, with nothing past the window', async () => {
    await page.goto(url('metrics'));
    for (const [w, h, name] of [
      [1280, 900, 'wide'],
      [390, 844, 'phone'],
    ] as const)
      for (const theme of ['light', 'dark'] as const) {
        await page.setViewportSize({ width: w, height: h });
        await page.emulateMedia({ colorScheme: theme });
        await expectAttr(chart('commit').getByTestId('time-chart'), 'data-gap-labels', /^[1-9]\d*$/);
        await page.getByTestId('apart-http').waitFor();
        expect(await page.evaluate<number>('document.scrollingElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(1);
        for (const id of ['http', 'commit']) {
          const b = (await chart(id).boundingBox())!;
          expect(b.x + b.width).toBeLessThanOrEqual(w);
        }
        await page.screenshot({ animations: 'disabled', path: shot(`metrics-charts-${name}-${theme}`), fullPage: true });
      }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(pageErrors).toEqual([]);
  });
});
