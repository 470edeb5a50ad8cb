import { checkNote, parseCheckpointText, parseNote, parseVkey } from '@svc/events/merkle/note';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import type { CheckpointKeyView } from '@svc/console-api';
import { pairPhone, readEvents, startRelay, tempHome, type TestRelay } from '../support/harness';
import { ensureConsoleBuilt, launchBrowser, launchWatchedPage, shot, signIn } from './browser';
import { svc } from '../support/cli';
import { operatorFetch } from '../support/http';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

jest.setTimeout(60_000);

describe('console Store page: signed checkpoints in headless chromium', () => {
  let relay: TestRelay;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    ensureConsoleBuilt();
    relay = await startRelay();
    await pairPhone(relay).then((p) => p.phone.close());
    while (relay.loop.models.connections.count() > 0) await new Promise((r) => setTimeout(r, 10));
    await relay.loop.drain();
    ({ browser, page } = await launchWatchedPage(pageErrors));
    await signIn(page, relay);
  });
  afterAll(async () => {
    await browser?.close();
    await relay?.close();
  });

  it('shows the public key and its key id, as the relay and the CLI know them', async () => {
    await page.goto(`${relay.url}/console/store`);
    const key = page.getByTestId('checkpoint-public-key');
    await key.waitFor();
    const view = (await (await fetch(`${relay.url}/console/api/store/checkpoint`)).json()) as CheckpointKeyView;
    expect(await key.innerText()).toBe(view.public_key);
    expect(await page.getByTestId('checkpoint-key-id').innerText()).toBe(view.key_id);
    const cli = await svc(['relay', 'events', 'public-key', '--json'], { SVC_HOME: relay.home });
    expect(JSON.parse(cli.stdout)).toMatchObject({ public_key: view.public_key, key_id: view.key_id, created: false });
    await page.screenshot({ animations: 'disabled', path: shot('store-checkpoint-key'), fullPage: true });
    expect(pageErrors).toEqual([]);
  });

  it('downloads a C2SP signed note of the head, shown with its verifier key, that the CLI verifies with the key copied from the page', async () => {
    const head = { seq: relay.loop.lastSeq, hash: relay.loop.lastHash };
    const vkey = await page.getByTestId('checkpoint-vkey').innerText();
    expect(vkey).toBe((await svc(['relay', 'events', 'vkey'], { SVC_HOME: relay.home })).stdout.trim());
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('checkpoint-make').click()]);
    expect(download.suggestedFilename()).toBe(`svc-checkpoint-${head.seq}.txt`);
    const file = path.join(tempHome(), download.suggestedFilename());
    await download.saveAs(file);
    // The signed note (issue 39), not the older JSON form: origin, size, root, blank line, the log's signature.
    const saved = fs.readFileSync(file, 'utf8');
    const note = parseNote(saved);
    expect(parseCheckpointText(note.text)).toMatchObject({ origin: vkey.split('+')[0], size: head.seq });
    expect(checkNote(note, [parseVkey(vkey)])).toHaveLength(1);

    const made = page.getByTestId('checkpoint-made');
    await made.waitFor();
    expect(await page.getByTestId('checkpoint-note').innerText()).toBe(saved);
    expect(await made.innerText()).toContain(`svc relay events verify --checkpoint ${download.suggestedFilename()} --vkey '${vkey}'`);
    expect(readEvents(relay.home).filter((e) => e.type === 'store.checkpoint_signed')).toEqual([
      expect.objectContaining({ data: expect.objectContaining({ seq: head.seq, hash: head.hash, by: 'operator' }) }),
    ]);

    const r = await svc(['relay', 'events', 'verify', '--checkpoint', file, '--vkey', vkey], { SVC_HOME: relay.home });
    expect(r).toMatchObject({ code: 0 });
    expect(r.stdout).toContain('(C2SP signed note)');
    expect(r.stdout).toContain(`same root at size ${head.seq}`);
    await page.screenshot({ animations: 'disabled', path: shot('store-checkpoint'), fullPage: true });
    // The card alone, in a window tall enough that the live ticker (fixed to its foot) covers none of it.
    await page.setViewportSize({ width: 1280, height: 1600 });
    await made.locator('xpath=ancestor::section[1]').screenshot({ animations: 'disabled', path: shot('store-checkpoint-card') });
    expect(pageErrors).toEqual([]);
  });

  it('reads in the dark theme and in a narrow window', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ animations: 'disabled', path: shot('store-checkpoint-dark'), fullPage: true });
    await page
      .getByTestId('checkpoint-made')
      .locator('xpath=ancestor::section[1]')
      .screenshot({ animations: 'disabled', path: shot('store-checkpoint-card-dark') });
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.setViewportSize({ width: 390, height: 844 });
    const card = page.getByTestId('checkpoint-key');
    expect((await card.boundingBox())!.width).toBeLessThanOrEqual(390);
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow).toBe(0);
    await page.getByTestId('checkpoint-made').scrollIntoViewIfNeeded();
    await page.screenshot({ animations: 'disabled', path: shot('store-checkpoint-narrow') });
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(pageErrors).toEqual([]);
  });
});
