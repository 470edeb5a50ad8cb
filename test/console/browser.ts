import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { buildParts, staleParts } from '../../scripts/build-if-stale';

const ROOT = path.resolve(__dirname, '../..');
export const CONSOLE_DIST = path.join(ROOT, 'apps/console/dist');
export const SHOTS = path.join(ROOT, 'test-results/console');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Builds the console when its inputs changed since its last build (scripts/build-if-stale.js, as `npm start` does). */
export function ensureConsoleBuilt(): void {
  if (staleParts(ROOT, ['console']).length > 0) buildParts(ROOT, ['console']);
}

/** What a reader's browser says about them: its language (`de-DE`) and time zone (`Europe/Berlin`). */
export type Reader = { locale?: string; timezoneId?: string };

/** Headless Debian chromium with a fresh profile, nothing phoning home. */
export async function launchBrowser(reader: Reader = {}): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-console-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
    ...reader,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-dev-shm-usage',
    ],
  });
  context.setDefaultTimeout(8000);
  return {
    context,
    close: async () => {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

export function shot(name: string): string {
  fs.mkdirSync(SHOTS, { recursive: true });
  return path.join(SHOTS, `${name}.png`);
}

/** A fresh browser and a page whose script errors and console errors land in `errors` (the specs assert it stays empty). */
export async function launchWatchedPage(
  errors: string[],
  reader: Reader = {},
): Promise<{ browser: Awaited<ReturnType<typeof launchBrowser>>; context: BrowserContext; page: Page }> {
  const browser = await launchBrowser(reader);
  const page = await browser.context.newPage();
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  return { browser, context: browser.context, page };
}

/**
 * Signs the page's browser in to `relay`'s console the way an operator does: opens a one-time link (what
 * `svc relay console` prints); the console posts its ticket and gets the HttpOnly cookie, then shows itself.
 */
export async function signIn(page: Page, relay: { consoleLink(): Promise<{ url: string }> }): Promise<void> {
  const link = await relay.consoleLink();
  await page.goto(link.url);
  await page.waitForSelector('header.topbar');
}

/** Pixels of a chart's canvas within a small distance of an RGB colour (read in the page: the test has no DOM types). */
export function pixelsNear(page: Page, chartId: string, rgb: [number, number, number]): Promise<number> {
  return page.evaluate(`(() => {
    const canvas = document.querySelector('[data-chart="${chartId}"] canvas');
    if (!canvas) return -1;
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    const [r, g, b] = ${JSON.stringify(rgb)};
    let n = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (data[i + 3] > 200 && Math.abs(data[i] - r) + Math.abs(data[i + 1] - g) + Math.abs(data[i + 2] - b) < 40) n++;
    }
    return n;
  })()`);
}

export function cssToken(page: Page, token: string): Promise<string> {
  return page.evaluate(`getComputedStyle(document.documentElement).getPropertyValue(${JSON.stringify(token)}).trim()`);
}

/** Pixels drawn in a CSS token's colour (as the page resolves it now). */
export async function strokePixels(page: Page, chartId: string, token: string): Promise<number> {
  const hex = await cssToken(page, token);
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
  if (!m) throw new Error(`${token} is ${hex}, not #rrggbb`);
  return pixelsNear(page, chartId, [parseInt(m[1], 16), parseInt(m[2], 16), parseInt(m[3], 16)]);
}

/** Polls `test` until it holds (no fixed delay). */
export async function waitFor(test: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await test()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('condition not met in time');
}

export async function expectAttr(locator: Locator, name: string, want: string | RegExp, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: string | null = null;
  while (Date.now() < deadline) {
    last = await locator.getAttribute(name, { timeout: 1000 }).catch(() => null);
    if (last !== null && (typeof want === 'string' ? last === want : want.test(last))) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`expected ${name}=${String(want)}, last ${JSON.stringify(last)}`);
}

export async function expectText(locator: Locator, re: RegExp, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last = ((await locator.innerText().catch(() => '')) ?? '').replace(/\s+/g, ' ').trim();
    if (re.test(last)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`expected ${re} in ${JSON.stringify(last)}`);
}
