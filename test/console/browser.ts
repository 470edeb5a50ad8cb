import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

const ROOT = path.resolve(__dirname, '../..');
export const CONSOLE_DIST = path.join(ROOT, 'apps/console/dist');
export const SHOTS = path.join(ROOT, 'test-results/console');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

/** Builds the console once if the build is missing or older than its sources. */
export function ensureConsoleBuilt(): void {
  const index = path.join(CONSOLE_DIST, 'index.html');
  const src = path.join(ROOT, 'apps/console');
  const sources = Math.max(
    newestMtime(path.join(src, 'src')),
    fs.statSync(path.join(src, 'index.html')).mtimeMs,
    fs.statSync(path.join(src, 'vite.config.mts')).mtimeMs,
  );
  if (fs.existsSync(index) && fs.statSync(index).mtimeMs >= sources) return;
  execFileSync(path.join(ROOT, 'node_modules/.bin/vite'), ['build', '--config', 'apps/console/vite.config.mts', '--logLevel', 'error'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
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
