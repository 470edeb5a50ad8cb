import * as fs from 'node:fs';
import * as path from 'node:path';
import { svc } from '../support/cli';
import { ensureBuilt, type SvcProcess } from '../support/dist';
import { pairPhone, startRelay, tempHome, type TestRelay } from '../support/harness';
import { relayWithListeningWitness, submitRound } from '../support/witness';
import { ensureConsoleBuilt, expectText, launchWatchedPage, shot, signIn } from './browser';

jest.setTimeout(60_000);

/**
 * The Store page's Witnesses card (issue 39) in headless chromium: a real witness (the CLI, its own home)
 * cosigns the relay's checkpoint, then refuses one that went back behind the tree it cosigned; the card
 * shows both, the refusal as an alert.
 */
describe('console Store page: witnesses', () => {
  let relay: TestRelay;
  let page: Awaited<ReturnType<typeof launchWatchedPage>>['page'];
  let browser: Awaited<ReturnType<typeof launchWatchedPage>>['browser'];
  const pageErrors: string[] = [];
  const witnessHome = tempHome();

  beforeAll(async () => {
    ensureConsoleBuilt();
    const wvkey = (await svc(['relay', 'witness', '--home', witnessHome, '--name', 'witness.test/w1', '--print-vkey'])).stdout.trim();
    relay = await startRelay({ env: { RELAY_WITNESS_VKEYS: wvkey } });
    (await pairPhone(relay)).phone.close();
    await relay.loop.drain();
    ({ browser, page } = await launchWatchedPage(pageErrors));
    await signIn(page, relay);
  });
  afterAll(async () => {
    await browser?.close();
    await relay?.close();
  });

  it('shows the configured witness with no activity, then the newest cosigned checkpoint, then a refusal', async () => {
    await page.goto(`${relay.url}/console/store`);
    const card = page.locator('.card', { hasText: 'Witnesses' });
    await expectText(card, /Witnesses on other machines cosign/);
    // The configured witness has a row before it has said anything.
    await expectText(page.getByTestId('witness-row'), /witness\.test\/w1\s*none yet\s*none/);
    expect(await page.getByTestId('witness-push').count()).toBe(0);

    const logVkey = (await svc(['relay', 'events', 'vkey'], { SVC_HOME: relay.home })).stdout.trim();
    const ok = await svc(['relay', 'witness', '--home', witnessHome, '--relay', relay.url, '--log-vkey', logVkey]);
    expect(ok.code).toBe(0);
    const size = (JSON.parse(fs.readFileSync(path.join(witnessHome, 'state.json'), 'utf8')) as { size: number }).size;
    await page.reload();
    await expectText(page.getByTestId('witness-row'), new RegExp(`witness\\.test/w1\\s*✓ cosigned tree ${size}`));

    // The witness remembers a larger tree than the relay now serves: the log went back behind it.
    const state = JSON.parse(fs.readFileSync(path.join(witnessHome, 'state.json'), 'utf8')) as { size: number };
    fs.writeFileSync(path.join(witnessHome, 'state.json'), JSON.stringify({ ...state, size: state.size + 1000 }));
    const refused = await svc(['relay', 'witness', '--home', witnessHome, '--relay', relay.url]);
    expect(refused.code).toBe(1);
    await page.reload();
    await expectText(page.getByTestId('witness-refusal'), new RegExp(`refused tree ${size}.*went back from ${size + 1000} records`, 's'));
    expect(await page.getByTestId('witness-refusal').getAttribute('role')).toBe('alert');
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ animations: 'disabled', path: shot('store-witnesses') });
    expect(pageErrors).toEqual([]);
  });
});

/**
 * The same card when the relay submits its checkpoints to a witness (RELAY_WITNESS_URLS, C2SP tlog-witness):
 * the CLI's witness serving `--listen` in its own process answers, the card shows it; stopped, the card
 * says the submission failed, why, and when the relay tries again.
 */
describe('console Store page: witnesses the relay submits to', () => {
  let relay: TestRelay;
  let witness: SvcProcess;
  let page: Awaited<ReturnType<typeof launchWatchedPage>>['page'];
  let browser: Awaited<ReturnType<typeof launchWatchedPage>>['browser'];
  const pageErrors: string[] = [];
  const witnessHome = tempHome();

  afterAll(async () => {
    if (witness?.child.exitCode === null) witness.child.kill('SIGKILL');
    await browser?.close();
    await relay?.close();
  });

  it('shows each submission: answered, then failed with the reason and the next try', async () => {
    ensureConsoleBuilt();
    ensureBuilt();
    let url: string;
    ({ relay, witness, url } = await relayWithListeningWitness(witnessHome, 'witness.test/push'));
    const submit = () => submitRound(relay);
    await submit();
    ({ browser, page } = await launchWatchedPage(pageErrors));
    await signIn(page, relay);
    await page.goto(`${relay.url}/console/store`);
    await expectText(page.getByTestId('witness-push'), new RegExp(`✓ answered.*${url.replace(/[.:/]/g, '\\$&')}`, 's'));
    await expectText(page.getByTestId('witness-row'), /witness\.test\/push\s*✓ cosigned tree \d+/);

    witness.child.kill('SIGTERM');
    await witness.exited;
    await submit();
    await page.reload();
    await expectText(page.getByTestId('witness-push'), /failed.*did not answer: ECONNREFUSED.*next try at .*\(1 in a row\)/s);
    const card = page.locator('.card', { hasText: 'Witnesses' });
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ animations: 'disabled', path: shot('store-witnesses-push') });
    expect(pageErrors).toEqual([]);
  });
});
