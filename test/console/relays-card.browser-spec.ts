import { ManualClock } from '../../apps/relay/src/common/loop/clock';
import { startRelay, tempHome, type TestRelay } from '../support/harness';
import { ensureBuilt } from '../support/dist';
import { usePostgres } from '../support/postgres';
import { pairEnv, standbyInit, startStandby, stopRelay, waitFor, type RelayProcess } from '../support/standby';
import { ensureConsoleBuilt, expectText, launchWatchedPage, shot, signIn } from './browser';

jest.setTimeout(180_000);
beforeAll(() => ensureBuilt(), 120_000);
const pg = usePostgres();

/**
 * The Store page's Relays card (issue 38 item 6) in headless chromium at phone width: a leader (this
 * process, on an injected clock) and a hot standby (a real relay process) on one real PostgreSQL database.
 * The card lists both with role, epoch and lag; once the standby is stopped and the leader's clock moves on
 * past the stale bound, it reads "not seen for".
 */
describe('console Store page: the Relays card', () => {
  let leader: TestRelay;
  let standby: RelayProcess | null = null;
  let page: Awaited<ReturnType<typeof launchWatchedPage>>['page'];
  let browser: Awaited<ReturnType<typeof launchWatchedPage>>['browser'];
  const pageErrors: string[] = [];
  // The leader's clock starts at the wall clock: the standby process writes its rows on its own (real) one.
  const clock = new ManualClock(new Date().toISOString());

  beforeAll(async () => {
    ensureConsoleBuilt();
    const url = await pg.createDatabase();
    leader = await startRelay({ clock, env: pairEnv(url) });
    const standbyHome = tempHome();
    expect(await standbyInit(leader.home, standbyHome, url)).toMatchObject({ code: 0 });
    standby = await startStandby(standbyHome, url);
    ({ browser, page } = await launchWatchedPage(pageErrors));
    await page.setViewportSize({ width: 390, height: 844 });
    await signIn(page, leader);
  });
  afterAll(async () => {
    await browser?.close();
    await stopRelay(standby);
    await leader?.close();
  });

  const overflow = () => page.evaluate<number>('document.scrollingElement.scrollWidth - window.innerWidth');

  it('shows both relays with role, epoch and lag at 390 px, then the stopped standby as not seen', async () => {
    await page.goto(`${leader.url}/console/store`);
    const card = page.locator('.card', { hasText: 'The relays on this database' });
    await expectText(card, /The relays on this database/);
    await waitFor('both rows', async () => (await page.locator('[data-testid="relays"] tbody tr').count()) === 2);
    const rows = page.locator('[data-testid="relays"] tbody tr');
    const esc = (u: string) => new RegExp(u.replace(/[.:/]/g, '\\$&'));
    await expectText(rows.nth(0), esc(leader.url));
    await expectText(rows.nth(0), /\(this one\)/);
    await expectText(rows.nth(0).getByTestId('relay-role'), /leader/);
    await expectText(rows.nth(0).getByTestId('relay-epoch'), /1/);
    await expectText(rows.nth(1), esc(standby!.url));
    await expectText(rows.nth(1).getByTestId('relay-role'), /standby/);
    await expectText(rows.nth(1).getByTestId('relay-epoch'), /1/);
    await expectText(rows.nth(1), /standby 1 #\d+ \d+ records, \d+ ms/);
    await expectText(rows.nth(1).getByTestId('relay-seen'), /just now|\d+s ago/);
    expect(await overflow()).toBeLessThanOrEqual(0);
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ animations: 'disabled', path: shot('store-relays-390') });

    // The standby stops; the leader's clock moves a minute on (its own row is rewritten on its next beat). The standby
    // wrote on the wall clock, a few seconds ahead of the leader's: "not seen for" reads a little under a minute.
    await stopRelay(standby);
    clock.advanceSeconds(60);
    await expectText(rows.nth(1).getByTestId('relay-seen'), /^not seen for (\d+s|1 min( \d+s)?)$/, 15_000);
    await expectText(rows.nth(0).getByTestId('relay-seen'), /just now/, 15_000);
    expect(await overflow()).toBeLessThanOrEqual(0);
    await card.screenshot({ animations: 'disabled', path: shot('store-relays-390-stale') });
    expect(pageErrors).toEqual([]);
  });
});
