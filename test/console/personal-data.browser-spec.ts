import type { Locator, Page } from 'playwright-core';
import type { ForgetAnswer, PersonalDataView } from '@svc/console-api';
import { pairPhone, readEvents, startRelay, type TestRelay } from '../support/harness';
import { A_SECRETS, personalTraffic } from '../support/personal-keys';
import { ensureConsoleBuilt, launchBrowser, launchWatchedPage, shot, signIn } from './browser';
import { operatorFetch } from '../support/http';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

jest.setTimeout(60_000);

async function api<T>(relay: TestRelay, path: string, body?: object): Promise<T> {
  const res = await fetch(`${relay.url}/console/api${path}`, {
    method: body ? 'POST' : 'GET',
    headers: body ? { 'content-type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  return (await res.json()) as T;
}

const forgotten = (relay: TestRelay) => readEvents(relay.home).filter((e) => e.type === 'personal.forgotten');

/** The page in light and dark, wide and at 390 px, as an operator would look at it. */
async function shots(page: Page, name: string, part?: Locator): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    const suffix = scheme === 'dark' ? '-dark' : '';
    await page.screenshot({ animations: 'disabled', path: shot(`${name}${suffix}`), fullPage: true });
    if (part) {
      await page.setViewportSize({ width: 1280, height: 1600 });
      await part.screenshot({ animations: 'disabled', path: shot(`${name}-card${suffix}`) });
      await page.setViewportSize({ width: 390, height: 844 });
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      expect(overflow).toBe(0);
      await part.scrollIntoViewIfNeeded();
      await page.screenshot({ animations: 'disabled', path: shot(`${name}-narrow${suffix}`) });
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

describe('console Devices page: personal content, forgetting, revoke with forget (headless chromium)', () => {
  let relay: TestRelay;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  let aPrefix: string;
  let bPrefix: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    ensureConsoleBuilt();
    relay = await startRelay({ env: { PHONE_ENABLED: '1' } });
    ({ aPrefix, bPrefix } = await personalTraffic(relay));
    await relay.loop.drain();
    ({ browser, page } = await launchWatchedPage(pageErrors));
    await signIn(page, relay);
  });
  afterAll(async () => {
    await browser?.close();
    await relay?.close();
  });

  const section = () => page.locator('#personal-content');
  const row = (prefix: string) => page.locator(`[data-testid="personal-devices"] tr[data-device="${prefix}"]`);

  it('lists both devices with their keys and hours, says what is sealed, where the keys are and the retention', async () => {
    await page.goto(`${relay.url}/console/devices`);
    await row(aPrefix).waitFor();
    const view = await api<PersonalDataView>(relay, '/personal-data');
    expect(view.devices.map((d) => d.device).sort()).toEqual([aPrefix, bPrefix].sort());
    for (const d of view.devices) {
      const r = row(d.device);
      expect(await r.innerText()).toContain(d.device === aPrefix ? 'Phone A' : 'Phone B');
      expect(await r.getByTestId('personal-keys').innerText()).toBe(String(d.keys));
      // The relay's clock (2026-03-01 12:00 UTC) made both keys, in that hour.
      expect(await r.innerText()).toContain('2026-03-01 12:00 UTC');
    }
    expect(await page.getByTestId('personal-where').innerText()).toBe(view.where);
    expect(view.where).toMatch(/personal-keys\.json$/);
    expect(await page.getByTestId('personal-retention').innerText()).toContain('Kept until forgotten');
    expect(await section().innerText()).toContain('Nothing forgotten yet');
    await shots(page, 'personal-data', section());
    expect(pageErrors).toEqual([]);
  });

  it("forgets one device through the dialog: the dry run's count first, then its row goes and the forgettings list it", async () => {
    const dry = await api<ForgetAnswer>(relay, '/personal-data/forget', { device: aPrefix, dry_run: true });
    expect(dry.keys).toBeGreaterThan(0);
    await page.getByRole('button', { name: `Forget content of Phone A (${aPrefix})` }).click();
    const count = page.getByTestId('forget-dry-run');
    await count.filter({ hasText: `would destroy ${dry.keys} hourly data key` }).waitFor();
    const dialog = page.locator('dialog[open]');
    expect(await dialog.innerText()).toContain('This cannot be undone.');
    expect(await dialog.innerText()).toContain('The rest of each event');
    // Asking recorded nothing and destroyed nothing.
    expect(forgotten(relay)).toEqual([]);
    await page.screenshot({ animations: 'disabled', path: shot('personal-data-forget-dialog') });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ animations: 'disabled', path: shot('personal-data-forget-dialog-dark') });
    await page.emulateMedia({ colorScheme: 'light' });

    await page.getByTestId('confirm-forget').click();
    await row(aPrefix).waitFor({ state: 'detached' });
    await dialog.waitFor({ state: 'detached' });
    expect(await row(bPrefix).count()).toBe(1);
    const [ev] = forgotten(relay);
    expect(ev).toMatchObject({ actor: 'operator', data: { scope: 'device', device: aPrefix, before: null } });
    expect(ev.data.keys).toHaveLength(dry.keys);
    expect(await page.getByTestId('personal-done').innerText()).toContain(
      `Forgot the content of Phone A (${aPrefix}): ${dry.keys} hourly data key${dry.keys === 1 ? '' : 's'} destroyed (event #${ev.seq})`,
    );
    const listed = page.locator(`[data-testid="personal-forgettings"] tr[data-seq="${ev.seq}"]`);
    await listed.waitFor();
    const text = await listed.innerText();
    expect(text).toContain('one device, asked by the operator');
    expect(text).toContain(aPrefix);
    expect(text).toContain('Phone A');
    expect(text).toContain('operator');
    await shots(page, 'personal-data-forgotten', section());
    expect(pageErrors).toEqual([]);
  });

  it('the Threads page shows "forgotten" where A\'s content was, never the old text; B\'s stays', async () => {
    await page.goto(`${relay.url}/console/threads`);
    await page.getByTestId('thread-list').waitFor();
    await page.getByTestId('forgotten').first().waitFor();
    const notifications = page.locator('section.card', { hasText: 'Recent notifications' });
    expect(await notifications.locator('li', { hasText: 'com.chat' }).innerText()).toContain('Chat');
    expect(await notifications.locator('li', { hasText: 'com.bank' }).innerText()).toContain('forgotten');
    await page.getByRole('button', { name: 'Open thread plans' }).click();
    const entries = page.getByTestId('thread-entries');
    await entries.waitFor();
    expect(await entries.locator('[data-kind="message"] [data-testid="forgotten"]').count()).toBe(1);
    expect(await entries.locator('[data-kind="reply"] [data-testid="forgotten"]').count()).toBe(1);
    const body = await page.locator('body').innerText();
    const html = await page.content();
    for (const s of A_SECRETS) {
      expect(body).not.toContain(s);
      expect(html).not.toContain(s);
    }
    // The relay's rows say so themselves.
    const threads = JSON.stringify(await api(relay, '/threads'));
    expect(threads).toContain('"forgotten":true');
    expect(JSON.stringify(await api(relay, '/threads/plans'))).toMatch(/"kind":"reply"[^}]*"forgotten":true/);
    await shots(page, 'personal-data-threads');
    await page.keyboard.press('Escape');
    expect(pageErrors).toEqual([]);
  });

  it("the Events page's detail says a notification's content is forgotten or sealed, with its key, never the content", async () => {
    await page.goto(`${relay.url}/console/events`);
    const rows = page.locator('tr[data-type="notification.posted"]');
    await rows.nth(1).waitFor();
    const seen: string[] = [];
    const notes: string[] = [];
    for (const i of [0, 1]) {
      await rows.nth(i).click();
      const json = page.getByTestId('event-json');
      await json.waitFor();
      seen.push(await json.innerText());
      notes.push(await page.getByTestId('sealed-note').innerText());
      await page.screenshot({ animations: 'disabled', path: shot(`personal-data-event-drawer-${i === 0 ? 'sealed' : 'forgotten'}`) });
      await page.keyboard.press('Escape');
      await json.waitFor({ state: 'detached' });
    }
    // Newest first: B's (sealed, its key kept), then A's (forgotten).
    expect(seen[0]).toContain('"content": "sealed"');
    expect(seen[1]).toContain('"content": "forgotten"');
    expect(notes[0]).toMatch(/^Its personal content \(titles, texts, messages\) is sealed in the record under \S+ and never shown here/);
    expect(notes[1]).toMatch(/^Its personal content was forgotten: \S+, which sealed it, is destroyed/);
    for (const j of seen) expect(j).toMatch(/"sealedWith": "[A-Za-z0-9_-]+:2026-03-01T12:[0-9a-f]{8}"/);
    for (const s of [...A_SECRETS, 'charlie stays']) expect(seen.join('\n')).not.toContain(s);
    expect(pageErrors).toEqual([]);
  });

  it('revoking with "Also forget" forgets the device\'s content and says how many keys went', async () => {
    await page.goto(`${relay.url}/console/devices`);
    await row(bPrefix).waitFor();
    const keys = (await api<PersonalDataView>(relay, '/personal-data')).devices.find((d) => d.device === bPrefix)!.keys;
    await page.getByRole('button', { name: 'Revoke Phone B' }).click();
    const box = page.getByTestId('revoke-forget');
    expect(await box.isChecked()).toBe(false);
    await box.check();
    await page.screenshot({ animations: 'disabled', path: shot('personal-data-revoke-dialog') });
    await page.getByTestId('confirm-revoke').click();
    const notice = page.getByTestId('revoked-notice');
    await notice.waitFor();
    expect(await notice.innerText()).toContain(
      `Revoked Phone B (${bPrefix}) and forgot its content: ${keys} hourly data key${keys === 1 ? '' : 's'} destroyed.`,
    );
    await row(bPrefix).waitFor({ state: 'detached' });
    const ev = forgotten(relay).at(-1)!;
    expect(ev.data).toMatchObject({ scope: 'revoked', device: bPrefix });
    await page.locator(`[data-testid="personal-forgettings"] tr[data-seq="${ev.seq}"]`).filter({ hasText: 'when it was revoked' }).waitFor();
    await page.getByTestId('personal-empty').waitFor();
    expect(await page.getByTestId('forget-before').count()).toBe(0);
    expect(pageErrors).toEqual([]);
  });

  it('a plain revoke leaves the content; "Forget everything before" a time shows its dry run, then forgets', async () => {
    const c = await pairPhone(relay, { device: { device_id: 'phone-c', device_name: 'Phone C' } });
    c.phone.send('notifications', 'notification.posted', { package_name: 'com.mail', title: 'Mail', text: 'later' }, 'n3');
    await c.phone.next((f) => f.id === 'n3');
    await row(c.prefix).waitFor();

    // Nothing sealed in hours before 2026-03-01 12:00: the dialog says so and offers no Forget.
    await page.getByTestId('forget-before-at').fill('2026-03-01T11:59');
    await page.getByTestId('forget-before').click();
    await page.getByTestId('forget-dry-run').filter({ hasText: 'Nothing to forget' }).waitFor();
    expect(await page.getByTestId('confirm-forget').isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Cancel' }).click();

    // A plain revoke (the box left off): Phone C's content stays.
    await page.getByRole('button', { name: 'Revoke Phone C' }).click();
    await page.getByTestId('confirm-revoke').click();
    await page
      .getByTestId('revoked-notice')
      .filter({ hasText: `Revoked Phone C (${c.prefix}).` })
      .waitFor();
    const before = forgotten(relay).length;
    expect((await api<PersonalDataView>(relay, '/personal-data')).devices.map((d) => d.device)).toEqual([c.prefix]);

    await page.getByTestId('forget-before-at').fill('2026-03-01T12:30');
    await page.getByTestId('forget-before').click();
    await page.getByTestId('forget-dry-run').filter({ hasText: 'would destroy 1 hourly data key' }).waitFor();
    expect(await page.locator('dialog[open]').innerText()).toContain('2026-03-01 12:30 UTC');
    await page.getByTestId('confirm-forget').click();
    await page
      .getByTestId('personal-done')
      .filter({ hasText: 'Forgot everything before 2026-03-01 12:30 UTC: 1 hourly data key destroyed' })
      .waitFor();
    await row(c.prefix).waitFor({ state: 'detached' });
    expect(forgotten(relay)).toHaveLength(before + 1);
    expect(forgotten(relay).at(-1)).toMatchObject({ data: { scope: 'before', device: null, before: '2026-03-01T12:30:00.000Z' } });
    await shots(page, 'personal-data-after', section());
    expect(pageErrors).toEqual([]);
  });
});
