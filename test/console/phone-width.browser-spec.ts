import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { pairPhone, startRelay, type Phone, type TestRelay } from '../support/harness';
import { ensureConsoleBuilt, launchBrowser, launchWatchedPage, shot, signIn, waitFor } from './browser';
import { operatorFetch } from '../support/http';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

jest.setTimeout(120_000);

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };
const THEMES = ['light', 'dark'] as const;

/**
 * Issue 36: every page at phone width (390 x 844) and at 1280 x 900, light and dark, with data on it:
 * a menu that reaches every page, the current page named in the top bar, no sideways scroll, tables read
 * as cards, the live-event bar covering nothing.
 */
describe('console at phone width in headless chromium', () => {
  let relay: TestRelay;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  const phones: Phone[] = [];
  const pageErrors: string[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-console-phone-'));
  /** Page titles in menu order, as the desktop nav lists them. */
  let titles: string[] = [];

  beforeAll(async () => {
    ensureConsoleBuilt();
    relay = await startRelay({
      env: { PHONE_ENABLED: '1' },
      config: { terminalShell: path.join(__dirname, '../fixtures/bash-norc') },
    });
    // Rows for the tables: two phones (one with a long name and every grant), media, a Thread message.
    // Every grant for one day: one long chip ("bridge, chat, desktop, terminal, tui, voice 23h 59 min").
    phones.push(
      (
        await pairPhone(relay, {
          device: { device_name: 'Pixel 9 Pro XL of Ada Lovelace (work profile)', device_id: 'ada-pixel-9-pro-xl-work', device_platform: 'android' },
          terms: { ttl_seconds: 86400, grants: { desktop: '1d' } },
        })
      ).phone,
    );
    phones.push((await pairPhone(relay, { device: { device_name: 'Work iPhone', device_id: 'work-iphone', device_platform: 'ios' } })).phone);
    // An open shell, for the Terminal page's table.
    phones[1].send('terminal', 'terminal.attach', { cols: 80, rows: 24 });
    await phones[1].type('terminal', 'terminal.attached', 5000);
    const file = path.join(dir, 'nightly-build-report-with-a-long-name.txt');
    fs.writeFileSync(file, 'all green\n'.repeat(100));
    for (const req of [
      ['/media/register', { path: file, content_type: 'text/plain', sensitive: true }],
      ['/phone/message', { chat_id: 'ops', title: 'Nightly backup', text: 'Backup finished: 12 GB in 4 min.' }],
    ] as const) {
      const res = await fetch(`${relay.url}${req[0]}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(req[1]),
      });
      expect(res.status).toBeLessThan(300);
    }
    for (let i = 0; i < 3; i++) {
      relay.clock.advanceSeconds(2);
      await relay.sweep();
    }
    await relay.loop.drain();
    ({ browser, page } = await launchWatchedPage(pageErrors));
    await signIn(page, relay);
    await page.setViewportSize(DESKTOP);
    titles = await page.getByRole('navigation', { name: 'Console sections' }).getByRole('link').allInnerTexts();
    titles = titles.map((t) => t.replace(/\s*\d+$/, '').trim());
  });
  afterAll(async () => {
    for (const p of phones) p.close();
    await browser?.close();
    await relay?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const url = (p = '') => `${relay.url}/console/${p}`;
  const slug = (title: string) => title.toLowerCase().replace(/[^a-z]+/g, '-');

  /** The page's own width past the window (0: no sideways scroll). */
  const overflow = () => page.evaluate<number>('document.scrollingElement.scrollWidth - window.innerWidth');

  async function settle(): Promise<void> {
    await page.locator('.page-head h1').waitFor();
    await page.locator('.skeleton').first().waitFor({ state: 'detached' });
  }

  it('lists every page', () => {
    expect(titles.length).toBeGreaterThanOrEqual(14);
    expect(titles).toEqual(expect.arrayContaining(['Overview', 'Devices', 'Events', 'Store', 'Metrics']));
  });

  for (const theme of THEMES)
    it(`at 390 px (${theme}): a menu reaches every page, named in the top bar, with no sideways scroll`, async () => {
      await page.emulateMedia({ colorScheme: theme });
      await page.setViewportSize(PHONE);
      await page.goto(url());
      await settle();
      const menu = page.getByRole('button', { name: 'Menu' });
      // The desktop tabs are gone; the menu button stands for them.
      expect(await page.getByRole('navigation', { name: 'Console sections' }).isVisible()).toBe(false);
      for (const title of titles) {
        await menu.click();
        expect(await menu.getAttribute('aria-expanded')).toBe('true');
        const list = page.getByRole('navigation', { name: 'Console sections' });
        await list.waitFor();
        // Every page is in the list, and the list fits the window (scrolls itself if it must).
        expect(await list.getByRole('link').count()).toBe(titles.length);
        await inViewport(list.getByRole('link', { name: title, exact: true }), true);
        if (title === titles[0]) await page.screenshot({ animations: 'disabled', path: shot(`phone-menu-${theme}`) });
        await list.getByRole('link', { name: title, exact: true }).click();
        await list.waitFor({ state: 'hidden' });
        await settle();
        expect(await page.getByTestId('current-page').innerText()).toBe(title);
        expect(await overflow()).toBeLessThanOrEqual(1);
        await page.screenshot({ animations: 'disabled', path: shot(`phone-${slug(title)}-${theme}`), fullPage: true });
      }
      expect(pageErrors).toEqual([]);
    });

  it('at 390 px: the menu by keyboard: the current page focused, Escape closes it back to the button', async () => {
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize(PHONE);
    await page.goto(url('store'));
    await settle();
    const menu = page.getByRole('button', { name: 'Menu' });
    await menu.focus();
    await page.keyboard.press('Enter');
    const list = page.getByRole('navigation', { name: 'Console sections' });
    await list.waitFor();
    await waitFor(async () => (await page.evaluate<string | null>('document.activeElement.getAttribute("aria-current")')) === 'page');
    expect(await page.evaluate<string>('document.activeElement.textContent')).toBe('Store');
    await page.keyboard.press('Escape');
    await list.waitFor({ state: 'hidden' });
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await page.evaluate<string | null>('document.activeElement.getAttribute("aria-label")')).toBe('Menu');
  });

  it('at 390 px: Events shows what happened within the window, each event a card', async () => {
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize(PHONE);
    await page.goto(url('events'));
    await settle();
    const row = page.getByTestId('events-table').locator('tbody tr').first();
    const what = row.locator('td[data-label="What happened"]');
    await what.waitFor();
    expect((await what.innerText()).trim().length).toBeGreaterThan(5);
    await inViewport(what);
    // A card is a few lines, not a tall blank column.
    expect((await row.boundingBox())!.height).toBeLessThan(260);
  });

  it('at 390 px: tables are cards with every value labelled and inside the window', async () => {
    await page.setViewportSize(PHONE);
    for (const [p, testId] of [
      ['devices', 'sessions-table'],
      ['media', 'media-table'],
      ['store', 'store-segments'],
    ]) {
      await page.goto(url(p));
      await settle();
      const table = page.getByTestId(testId);
      await table.locator('tbody tr').first().waitFor();
      expect(await table.locator('thead').isVisible()).toBe(false);
      for (const cell of await table.locator('tbody tr').first().locator('td[data-label]').all()) await inViewport(cell);
    }
  });

  it('at 390 px: Store numbers are whole, and the Devices grants stay chips', async () => {
    await page.setViewportSize(PHONE);
    await page.goto(url('store'));
    await settle();
    const stats = page.getByTestId('store-stats');
    await stats.waitFor();
    // No value cut short: each is as wide as its text.
    for (const v of await stats.locator('.stat-value').all()) {
      expect(await v.evaluate((e) => e.scrollWidth - e.clientWidth)).toBeLessThanOrEqual(0);
      await inViewport(v);
    }
    await page.goto(url('devices'));
    await settle();
    const chips = page.getByTestId('sessions-table').locator('td[data-label="Grants"] .chip');
    expect(await chips.count()).toBeGreaterThan(1);
    for (const chip of await chips.all()) {
      const box = (await chip.boundingBox())!;
      // A chip that wraps is a rounded tag, not a pill stretched into a blob: its corners stay small.
      const radius = parseFloat(await chip.evaluate((e) => (globalThis as unknown as Window).getComputedStyle(e).borderTopLeftRadius));
      if (box.height > 30) expect(radius).toBeLessThanOrEqual(8);
      await inViewport(chip);
    }
    // The long one does wrap at this width (so the line above is tested).
    expect(Math.max(...(await Promise.all((await chips.all()).map(async (c) => (await c.boundingBox())!.height))))).toBeGreaterThan(30);
  });

  it('at 390 px and 1280 px: the live-event bar covers no card, scrolled to the top or the end', async () => {
    for (const size of [PHONE, DESKTOP])
      for (const p of ['', 'metrics', 'devices']) {
        await page.setViewportSize(size);
        await page.goto(url(p));
        await settle();
        await page.locator('.ticker-strip-link').waitFor();
        for (const to of ['0', 'document.scrollingElement.scrollHeight']) {
          await page.evaluate(`window.scrollTo(0, ${to})`);
          const bar = (await page.locator('.ticker-strip').boundingBox())!;
          expect(bar.height).toBeGreaterThan(20);
          for (const card of await page.locator('main .card').all()) {
            const c = (await card.boundingBox())!;
            const overlaps = c.y < bar.y + bar.height && bar.y < c.y + c.height;
            expect({ page: p, width: size.width, card: c, bar, overlaps }).toMatchObject({ overlaps: false });
          }
        }
      }
  });

  for (const theme of THEMES)
    it(`at 1280 px (${theme}): the tabs stay, no menu button, every page without sideways scroll`, async () => {
      await page.emulateMedia({ colorScheme: theme });
      await page.setViewportSize(DESKTOP);
      await page.goto(url());
      await settle();
      expect(await page.getByRole('button', { name: 'Menu' }).isVisible()).toBe(false);
      const nav = page.getByRole('navigation', { name: 'Console sections' });
      for (const title of titles) {
        await nav.getByRole('link', { name: title, exact: true }).click();
        await settle();
        expect(await page.getByRole('heading', { level: 1 }).innerText()).toBeTruthy();
        expect(await overflow()).toBeLessThanOrEqual(1);
        await page.screenshot({ animations: 'disabled', path: shot(`wide-${slug(title)}-${theme}`), fullPage: true });
      }
      await page.emulateMedia({ colorScheme: 'light' });
      expect(pageErrors).toEqual([]);
    });
});

/** The browser's window, as far as these tests read it (the test compiles without the DOM's types). */
type Window = { getComputedStyle(e: unknown): { borderTopLeftRadius: string } };

/** The element lies inside the window's width (and, with `vertical`, its height). */
async function inViewport(locator: Locator, vertical = false): Promise<void> {
  await locator.scrollIntoViewIfNeeded();
  const box = await locator.boundingBox();
  const size = locator.page().viewportSize()!;
  expect(box).not.toBeNull();
  expect(box!.x).toBeGreaterThanOrEqual(0);
  expect(box!.x + box!.width).toBeLessThanOrEqual(size.width + 1);
  if (vertical) expect(box!.y + box!.height).toBeLessThanOrEqual(size.height + 1);
}
