import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { bearer, pairPhone, startRelay, tempHome, type TestRelay } from '../support/harness';
import { REMOTE } from '../support/http';
import { ensureConsoleBuilt, launchWatchedPage, shot, signIn } from './browser';

jest.setTimeout(60_000);

/** `n` bytes of text (lines, two-byte characters), cut on a character boundary. */
function textOf(n: number): string {
  let s = 'Línea de la soul, whole or not at all.\n'.repeat(Math.ceil(n / 30));
  while (Buffer.byteLength(s) > n) s = s.slice(0, -1);
  return s;
}

/**
 * Issue 35: phones and the console are shown a profile file whole up to the caps (RELAY_PROFILE_*_MAX_BYTES),
 * so a 100 KiB SOUL (cut at 64 KiB before) is edited here like any other; a file past its cap says it is
 * shown in part and that neither here nor a phone may save it (test/compat/app-profile-inspector pins the 409).
 */
describe('console Profiles page: SOUL and memory files by the caps', () => {
  let relay: TestRelay;
  let browser: Awaited<ReturnType<typeof launchWatchedPage>>['browser'];
  let page: Page;
  let token: string;
  const pageErrors: string[] = [];
  const soul = textOf(100 * 1024);
  const huge = textOf(6 * 1024);

  beforeAll(async () => {
    ensureConsoleBuilt();
    const home = tempHome();
    const work = path.join(home, 'profiles', 'work');
    fs.mkdirSync(path.join(work, 'memories'), { recursive: true });
    fs.writeFileSync(path.join(work, 'config.yaml'), 'description: Work persona\n');
    fs.writeFileSync(path.join(work, 'SOUL.md'), soul);
    fs.writeFileSync(path.join(work, 'memories', 'huge.md'), huge);
    fs.writeFileSync(path.join(work, 'memories', 'people.md'), 'Ana likes tea.\n');
    relay = await startRelay({ home, env: { RELAY_PROFILE_MEMORY_MAX_BYTES: '4096' } });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
    ({ browser, page } = await launchWatchedPage(pageErrors));
    await signIn(page, relay);
  });
  afterAll(async () => {
    await page?.goto('about:blank');
    await browser?.close();
    await relay?.close();
  });

  it('a 100 KiB SOUL is whole and editable; a memory file past its cap says it is shown in part and offers no edit', async () => {
    await page.goto(`${relay.url}/console/profiles`);
    await page.getByRole('button', { name: 'SOUL and memory of work' }).click();
    const soulView = page.getByTestId('profile-file-SOUL.md');
    await expectText(soulView.locator('.profile-file-head'), /^SOUL\.md 100(\.0)? KiB Edit$/);
    await expectText(page.locator('#profile-files .card-note'), /SOUL\.md here: 1(\.0)? MiB/);
    const hugeView = page.getByTestId('profile-file-huge.md');
    await expectText(hugeView.locator('.profile-file-head'), /shown in part \(the first 4(\.0)? KiB\) too large to edit here or on a phone/);
    expect(await hugeView.getByRole('button', { name: 'Edit huge.md' }).count()).toBe(0);
    await page.screenshot({ animations: 'disabled', path: shot('profiles-file-caps'), fullPage: true });

    await soulView.getByRole('button', { name: 'Edit SOUL.md' }).click();
    const editor = soulView.getByRole('textbox', { name: 'SOUL.md text' });
    expect(await editor.inputValue()).toBe(soul);
    await editor.press('Control+End');
    await editor.pressSequentially('Kept whole.\n');
    await soulView.getByRole('button', { name: 'Save' }).click();
    await expectText(soulView.locator('.profile-file-head'), /Edit$/);
    expect(fs.readFileSync(path.join(relay.home, 'profiles', 'work', 'SOUL.md'), 'utf8')).toBe(soul + 'Kept whole.\n');

    // The phone's blind save of the file it was shown in part is refused; the file stays whole.
    const phoneSave = await fetch(`${relay.url}/api/profiles/work/memory/huge.md`, {
      method: 'PUT',
      headers: { ...REMOTE, ...bearer(token), 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'Edited on the phone.\n' }),
    });
    expect(phoneSave.status).toBe(409);
    expect(fs.readFileSync(path.join(relay.home, 'profiles', 'work', 'memories', 'huge.md'), 'utf8')).toBe(huge);
    expect(pageErrors).toEqual([]);
  });
});

async function expectText(locator: Locator, re: RegExp, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last = ((await locator.innerText().catch(() => '')) ?? '').replace(/\s+/g, ' ').trim();
    if (re.test(last)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`expected ${String(re)}, last saw "${last}"`);
}
