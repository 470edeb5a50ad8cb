import type { Page } from 'playwright-core';
import { readEvents, startRelay, type TestRelay } from '../support/harness';
import { ensureConsoleBuilt, launchBrowser, launchWatchedPage, shot } from './browser';

/**
 * Issue 34: the console is the operator's by a credential, not by being on loopback. A browser without
 * the console's cookie sees how to get one; a one-time link signs it in (once, for 15 minutes); signing
 * out ends it; the ticket never stays in the address bar or the history.
 */
describe('console sign-in (chromium)', () => {
  let relay: TestRelay;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    ensureConsoleBuilt();
    relay = await startRelay();
    ({ browser, page } = await launchWatchedPage(pageErrors));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await relay?.close();
  });

  it('without the cookie: the sign-in page, saying how to get a link; no data of the relay', async () => {
    await page.goto(`${relay.url}/console/devices`);
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    const text = await page.locator('body').innerText();
    expect(text).toContain('svc relay console');
    expect(text).not.toContain(relay.url.replace('http://', ''));
    await page.screenshot({ animations: 'disabled', path: shot('sign-in'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ animations: 'disabled', path: shot('sign-in-dark'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'light' });
    // The 401s the page met on its way are the browser's own resource errors, not script errors.
    pageErrors.splice(0, pageErrors.length, ...pageErrors.filter((e) => !/401/.test(e)));
  });

  it('a link signs the browser in once: the ticket leaves the address bar, the cookie is HttpOnly, a second use is refused', async () => {
    const link = await relay.consoleLink();
    await page.goto(link.url);
    await page.locator('header.topbar').waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/');
    expect(page.url()).not.toContain('#');
    const cookies = await browser.context.cookies(`${relay.url}/console/`);
    const cookie = cookies.find((c) => c.name === `svc_console_${relay.port}`)!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console' });
    expect(await page.evaluate('document.cookie')).toBe('');
    await page.getByTestId('phones-online').waitFor();
    // The log holds digests only: neither the ticket nor the cookie.
    const events = JSON.stringify(readEvents(relay.home));
    expect(events).toContain('console.signed_in');
    expect(events).not.toContain(link.url.split('#')[1]);
    expect(events).not.toContain(cookie.value);

    const other = await launchBrowser();
    try {
      const again = await other.context.newPage();
      await again.goto(link.url);
      await again.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
      await again.getByRole('alert').filter({ hasText: 'already used or expired' }).waitFor();
      expect(again.url()).not.toContain('#');
      await again.screenshot({ animations: 'disabled', path: shot('sign-in-used-link'), fullPage: true });
    } finally {
      await other.close();
    }
  });

  it('signing out ends the session at the relay: the page asks for a link again', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    await page.getByRole('alert').filter({ hasText: 'You signed out' }).waitFor();
    expect(readEvents(relay.home).some((e) => e.type === 'console.signed_out')).toBe(true);
    await page.goto(`${relay.url}/console/`);
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    pageErrors.splice(0, pageErrors.length, ...pageErrors.filter((e) => !/401/.test(e)));
    expect(pageErrors).toEqual([]);
  });
});
