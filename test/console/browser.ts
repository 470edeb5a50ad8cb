import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { buildParts, staleParts } from '../../scripts/build-if-stale';

const ROOT = path.resolve(__dirname, '../..');
export const CONSOLE_DIST = path.join(ROOT, 'apps/console/dist');
export const SHOTS = path.join(ROOT, 'test-results/console');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Builds the console when its inputs changed since its last build (scripts/build-if-stale.js, as `npm start` does). */
export function ensureConsoleBuilt(): void {
  if (staleParts(ROOT, ['console']).length > 0) buildParts(ROOT, ['console']);
}

/** Headless Debian chromium with a fresh profile, nothing phoning home. */
export async function launchBrowser(): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-console-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
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
): Promise<{ browser: Awaited<ReturnType<typeof launchBrowser>>; context: BrowserContext; page: Page }> {
  const browser = await launchBrowser();
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
