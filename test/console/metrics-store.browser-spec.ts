import * as path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import type { MetricsView, VerifyStartAnswer } from '@svc/console-api';
import { ChainVerifyJobs } from '../../apps/relay/src/console/store/chain-verify-jobs';
import { pairPhone, startRelay, type Phone, type TestRelay } from '../support/harness';
import {
  cssToken,
  ensureConsoleBuilt,
  expectAttr,
  expectText,
  launchBrowser,
  launchWatchedPage,
  pixelsNear,
  shot,
  signIn,
  strokePixels,
  waitFor,
} from './browser';
import { operatorFetch } from '../support/http';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

jest.setTimeout(60_000);

describe('console Metrics and Store pages in headless chromium', () => {
  let relay: TestRelay;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let context: BrowserContext;
  let page: Page;
  const phones: Phone[] = [];
  const pageErrors: string[] = [];
  /** Lets a held chain check go (also at the end, so a failed test cannot hold the relay's shutdown). */
  let release: () => void = () => undefined;

  beforeAll(async () => {
    ensureConsoleBuilt();
    relay = await startRelay({ config: { snapshotEvery: 10 } });
    ({ browser, context, page } = await launchWatchedPage(pageErrors));
    // The page's timers on Playwright's clock, still running at real speed: `shown()` moves it past the
    // Metrics page's 2 s poll (get-metrics.ts) instead of waiting one out in real time.
    await page.clock.install();
    await signIn(page, relay);
  });
  afterAll(async () => {
    release();
    for (const p of phones) p.close();
    await browser?.close();
    await relay?.close();
  });

  const url = (p = '') => `${relay.url}/console/${p}`;

  /** Moves the relay's clock one sampling interval and waits for the sample. */
  async function sample(): Promise<void> {
    relay.clock.advanceSeconds(2);
    await relay.sweep();
  }

  /** The page's next poll of the metrics, now (it would come within 2 s anyway). */
  const shown = () => page.clock.fastForward(2_000);

  /** Points per chart, counted in the relay's own answer (values that are not null). */
  async function apiPoints(): Promise<Record<string, { series: number; points: number }>> {
    const v = (await (await fetch(`${relay.url}/console/api/metrics`)).json()) as MetricsView;
    return Object.fromEntries(
      v.charts.map((c) => [c.id, { series: c.series.length, points: c.series.reduce((n, s) => n + s.values.filter((x) => x !== null).length, 0) }]),
    );
  }

  const chart = (id: string) => page.locator(`[data-chart="${id}"] [data-testid="time-chart"]`);

  it('draws every chart with the points the relay sampled from real traffic, and links /metrics', async () => {
    await page.goto(url('metrics'));
    await page.getByTestId('metrics-collecting').waitFor();
    // Traffic between samples: phones pairing (sockets, commits), health checks (requests).
    for (let i = 0; i < 3; i++) {
      const { phone } = await pairPhone(relay, { device: { device_name: `Phone ${i}`, device_id: `metrics-phone-${i}` } });
      phones.push(phone);
      for (let j = 0; j < 4; j++) await fetch(`${relay.url}/health`);
      await sample();
    }
    await sample();
    const expected = await apiPoints();
    expect(expected.http.points).toBeGreaterThan(0);
    await shown();
    for (const id of ['http', 'sockets', 'commit', 'threads']) {
      await expectAttr(chart(id), 'data-points', String(expected[id].points));
      expect(await chart(id).getAttribute('data-series')).toBe(String(expected[id].series));
    }
    // 4 samples of 2 gauges, and of the queue; commit latency only where commits happened.
    expect(expected.sockets).toEqual({ series: 2, points: 8 });
    expect(expected.threads).toEqual({ series: 1, points: 4 });
    expect(expected.commit.points).toBeGreaterThanOrEqual(6);
    // The canvas holds the lines: the busiest family in the theme's first series colour (the accent).
    expect(await strokePixels(page, 'http', '--accent')).toBeGreaterThan(40);
    await expectText(page.locator('[data-chart="bridge"]'), /No Device Control command or safety decision/);
    await page.screenshot({ animations: 'disabled', path: shot('metrics'), fullPage: true });

    // Live: a new sample shows without a reload.
    const before = Number(await chart('sockets').getAttribute('data-points'));
    await sample();
    await shown();
    await expectAttr(chart('sockets'), 'data-points', String(before + 2));

    const link = page.getByTestId('metrics-link');
    expect(await link.getAttribute('href')).toBe('/console/api/metrics/prometheus');
    const [tab] = await Promise.all([context.waitForEvent('page'), link.click()]);
    await tab.waitForLoadState();
    const text = await tab.locator('body').innerText();
    expect(text).toContain('svc_event_commit_seconds_bucket');
    expect(text).toMatch(/svc_phone_sockets\{state="authenticated"\} 3/);
    await tab.close();
    expect(pageErrors).toEqual([]);
  });

  it("keeps the whole window across a reload (the ring is the relay's)", async () => {
    const points = await chart('sockets').getAttribute('data-points');
    await page.reload();
    await expectAttr(chart('sockets'), 'data-points', points!);
  });

  it('draws the charts in the dark theme colours, and fits a narrow window', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    await expectAttr(chart('sockets'), 'data-points', /\d+/);
    await waitFor(async () => (await strokePixels(page, 'http', '--accent')) > 40);
    const dark = await cssToken(page, '--accent');
    expect(dark).toBe('#8e8cff');
    // No line is left in the light accent.
    expect(await pixelsNear(page, 'http', [0x4f, 0x46, 0xe5])).toBe(0);
    await page.screenshot({ animations: 'disabled', path: shot('metrics-dark'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForTimeout(100); // the ResizeObserver's frame
    const width = (await page.locator('[data-chart="sockets"] canvas').boundingBox())!.width;
    expect(width).toBeLessThanOrEqual(390);
    await page.screenshot({ animations: 'disabled', path: shot('metrics-narrow'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('shows where the log lives, its size, last seq, segments and snapshots', async () => {
    await relay.loop.drain();
    // The Overview's "verify from #1" leads here, where the check shows its progress and result.
    await page.goto(url());
    await page.getByTestId('overview-verify').click();
    await page.waitForURL(url('store'));
    const dir = path.join(relay.home, 'relay', 'events');
    await expectText(page.getByTestId('store-location'), new RegExp(`^${escape(dir)}$`));
    await expectText(page.getByTestId('store-stats'), new RegExp(`Last seq #${relay.loop.lastSeq}`));
    await expectText(page.getByTestId('store-stats'), /Size \d+(\.\d)? KiB 1 segment/);
    await expectText(page.getByTestId('store-segments'), /segment-000000000001\.jsonl #1/);
    await expectText(page.getByTestId('store-snapshots'), /#\d+ 2026-03-01 12:00:\d\d UTC/);
    await expectText(page.getByTestId('store-commands'), new RegExp(`svc relay events export --log ${escape(dir)} --to svc-events.jsonl`));
    await page.screenshot({ animations: 'disabled', path: shot('store'), fullPage: true });
  });

  it('verifies from #1 with visible progress, joins a second start, then shows how many records, how long and when', async () => {
    const jobs = relay.app.get(ChainVerifyJobs);
    const upTo = relay.loop.lastSeq;
    jobs.chunkBytes = 512; // a record or two per piece, so the check is visibly part-way
    const gate = new Promise<void>((r) => (release = r));
    // Held once it has proven a record or more (the first piece may end inside the first, long record).
    jobs.pace = () => ((jobs.status()?.records ?? 0) > 0 ? gate : Promise.resolve());

    await page.getByTestId('verify-start').click();
    const progress = page.getByTestId('verify-progress');
    // Polled while it runs: the count it shows moves past 0 and stops where the check is held.
    await expectText(progress, new RegExp(`Verifying: [1-9]\\d* of ${upTo} records \\(\\d+%\\)`));
    const done = Number((/Verifying: (\d+)/.exec(await progress.innerText()) ?? [])[1]);
    expect(done).toBeGreaterThan(0);
    expect(done).toBeLessThan(upTo);
    expect(await page.getByTestId('verify-start').isDisabled()).toBe(true);
    await page.screenshot({ animations: 'disabled', path: shot('store-verifying'), fullPage: true });

    // A second start (another tab, a double click that got through) joins the running check.
    const second = await page.evaluate<VerifyStartAnswer>(
      `fetch('/console/api/store/verify', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }).then((r) => r.json())`,
    );
    expect(second.joined).toBe(true);
    expect(String(second.job.id)).toBe(await progress.getAttribute('data-job'));

    jobs.pace = () => Promise.resolve();
    release();
    const result = page.getByTestId('verify-result');
    await expectAttr(result, 'data-state', 'verified');
    await expectText(
      result,
      new RegExp(`chain intact ${upTo} records from #1 to #${upTo} proven in \\d+(\\.\\d+)? (ms|s) at 2026-03-01 12:00:\\d\\d UTC`),
    );
    expect(await result.getAttribute('data-job')).toBe(String(second.job.id));
    await page.screenshot({ animations: 'disabled', path: shot('store-verified'), fullPage: true });
  });

  it('shows the Store page in the dark theme and on a narrow window', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto(url('store'));
    await page.getByTestId('verify-result').waitFor();
    await page.screenshot({ animations: 'disabled', path: shot('store-dark'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByTestId('store-location').waitFor();
    const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ animations: 'disabled', path: shot('store-narrow'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(pageErrors).toEqual([]);
  });
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
