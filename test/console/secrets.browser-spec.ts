import type { Page } from 'playwright-core';
import { readEvents, startRelay, type TestRelay } from '../support/harness';
import { startSim } from '../support/bridge';
import { ensureConsoleBuilt, launchWatchedPage, shot, signIn } from './browser';
import type { PhoneSim } from '../../apps/phone-sim/src/phone-sim';

jest.setTimeout(60_000);

const VALUE = 'S3cret-Zeta-99!';
const NEW_VALUE = 'Other-Value-4411';

/*
 * The Bridge page's "Secrets for agents" (issue 40, item 3) in headless chromium: add one through the password
 * field, see it listed by name and time, replace it, forget it behind a confirm. The value never shows in the
 * page (text, HTML, the event list) nor stays in the field once sent.
 */
describe('console Bridge page: secrets for agents (headless chromium)', () => {
  let relay: TestRelay;
  let phone: PhoneSim;
  let browser: Awaited<ReturnType<typeof launchWatchedPage>>['browser'];
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    ensureConsoleBuilt();
    relay = await startRelay();
    phone = await startSim(relay, { deviceName: 'Pixel Console' });
    ({ browser, page } = await launchWatchedPage(pageErrors));
    await signIn(page, relay);
  });
  afterAll(async () => {
    phone?.stop();
    await browser?.close();
    await relay?.close();
  });

  const card = () => page.locator('section.card', { hasText: 'Secrets for agents' });
  const row = (name: string) => page.locator(`[data-testid="secrets"] tr[data-name="${name}"]`);
  /** Everything the page holds: what it shows, its HTML (attributes, hidden text) and the input fields' values. */
  const pageHolds = async () =>
    [
      await page.locator('body').innerText(),
      await page.content(),
      ...(await page.locator('input').evaluateAll((els) => els.map((e) => (e as unknown as { value: string }).value))),
    ].join('\n');

  async function shots(name: string): Promise<void> {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      const suffix = scheme === 'dark' ? '-dark' : '';
      await card().screenshot({ animations: 'disabled', path: shot(`${name}${suffix}`) });
      await page.setViewportSize({ width: 390, height: 844 });
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      expect(overflow).toBe(0);
      await card().scrollIntoViewIfNeeded();
      await page.screenshot({ animations: 'disabled', path: shot(`${name}-narrow${suffix}`) });
      await page.setViewportSize({ width: 1280, height: 800 });
    }
    await page.emulateMedia({ colorScheme: 'light' });
  }

  it('starts empty, then adds a secret from the password field: listed by name, the field cleared, the value nowhere in the page', async () => {
    await page.goto(`${relay.url}/console/bridge`);
    await card().getByText('No secrets yet').waitFor();
    await page.getByTestId('secret-name').fill('bank pin');
    expect(await page.getByTestId('secret-save').isDisabled()).toBe(true); // a space is no name
    await page.getByTestId('secret-name').fill('bank-pin');
    expect(await page.getByTestId('secret-value').getAttribute('type')).toBe('password');
    await page.getByTestId('secret-value').fill(VALUE);
    await page.getByTestId('secret-save').click();
    await row('bank-pin').waitFor();
    expect(await page.getByTestId('secret-done').innerText()).toBe('Registered bank-pin.');
    expect(await page.getByTestId('secret-value').inputValue()).toBe('');
    // Set at the relay's clock (the page's "now" is the server's), not used yet.
    expect(await row('bank-pin').innerText()).toMatch(/just now|0 s ago|ago/);
    expect(await row('bank-pin').innerText()).toContain('never');
    const set = readEvents(relay.home).filter((e) => e.type === 'secret.set');
    expect(set.map((e) => [e.actor, e.data.name])).toEqual([['operator', 'bank-pin']]);
    expect(await pageHolds()).not.toContain(VALUE);
    await shots('secrets');
    expect(pageErrors).toEqual([]);
  });

  it('an existing name is replaced; Forget asks first, then the row goes and the event list says so in words', async () => {
    await page.getByTestId('secret-name').fill('bank-pin');
    expect(await page.getByTestId('secret-save').innerText()).toBe('Replace');
    await page.getByTestId('secret-value').fill(NEW_VALUE);
    await page.getByTestId('secret-save').click();
    await page.getByTestId('secret-done').filter({ hasText: 'Replaced bank-pin.' }).waitFor();
    await page.getByTestId('forget-secret-bank-pin').click();
    const dialog = page.locator('dialog[open]');
    expect(await dialog.innerText()).toContain('becomes unreadable for good');
    await page.screenshot({ animations: 'disabled', path: shot('secrets-forget-dialog') });
    await page.getByTestId('confirm-forget-secret').click();
    await row('bank-pin').waitFor({ state: 'detached' });
    await card().getByText('No secrets yet').waitFor();
    const forgot = readEvents(relay.home).filter((e) => e.type === 'personal.forgotten');
    expect(forgot.map((e) => e.data.device)).toEqual(['secret-bank-pin', 'secret-bank-pin']);
    await page.goto(`${relay.url}/console/events`);
    await page.getByText('secret bank-pin replaced (its value sealed)').first().waitFor();
    const holds = await pageHolds();
    for (const v of [VALUE, NEW_VALUE]) expect(holds).not.toContain(v);
    expect(pageErrors).toEqual([]);
  });
});
