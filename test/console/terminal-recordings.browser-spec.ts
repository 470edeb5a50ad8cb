import * as path from 'node:path';
import type { Page, Request } from 'playwright-core';
import { pairPhone, startRelay, type TestRelay } from '../support/harness';
import { Screen } from '../support/terminal-screen';
import { ensureConsoleBuilt, launchWatchedPage, shot, signIn } from './browser';

const SHELL = path.join(__dirname, '../fixtures/bash-norc');
jest.setTimeout(60_000);

/** The page in light and dark, wide and narrow, as an operator would look at it. */
async function shots(page: Page, name: string): Promise<void> {
  // From the top: a full-page shot of a scrolled page draws the sticky header mid-page.
  await page.evaluate('window.scrollTo(0, 0)');
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ animations: 'disabled', path: shot(`${name}-${scheme}`), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ animations: 'disabled', path: shot(`${name}-${scheme}-narrow`), fullPage: true });
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 800 });
}

/** The player's screen as text (its terminal's rows). */
const screenText = (page: Page) => page.locator('[data-testid="recording-player"] .ap-term').innerText();

/** Waits until the player's screen does (or does not) show `text`; fails with what it shows. */
async function screenShows(page: Page, text: string, shows = true, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last = await screenText(page);
    if (last.includes(text) === shows) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the player ${shows ? 'never showed' : 'kept showing'} "${text}"; it shows ${JSON.stringify(last.slice(-400))}`);
}

describe('console Terminal page: recordings played in headless chromium', () => {
  let relay: TestRelay;
  let recordingId: string;
  const pageErrors: string[] = [];
  let close: () => Promise<void> = async () => undefined;
  let page: Page;
  const requested: string[] = [];

  beforeAll(async () => {
    ensureConsoleBuilt();
    relay = await startRelay({
      config: {
        terminalShell: SHELL,
        terminalRecording: { enabled: true, input: false, maxBytes: 64 * 1024 * 1024, totalBytes: 1024 * 1024 * 1024 },
      },
    });
    // A real shell, recorded: a first marker, a pause, a second one.
    const { phone } = await pairPhone(relay, { device: { device_name: 'Recorded phone', device_id: 'rec-phone-1' } });
    const screen = new Screen(phone);
    phone.send('terminal', 'terminal.attach', { session_name: 'audit', cols: 80, rows: 24 }, 'a');
    await phone.next((f) => f.id === 'a');
    phone.send('terminal', 'terminal.input', { session_name: 'audit', data: 'echo first-$((20+1))\r' });
    await screen.waitFor(/first-21/, 'audit');
    await new Promise((r) => setTimeout(r, 1500));
    phone.send('terminal', 'terminal.input', { session_name: 'audit', data: 'echo second-$((30+2))\r' });
    await screen.waitFor(/second-32/, 'audit');
    phone.send('terminal', 'terminal.kill', { session_name: 'audit' }, 'k');
    await phone.next((f) => f.id === 'k');
    phone.close();
    recordingId = relay.loop.models.terminalRecordings.list()[0].recordingId;
    const watched = await launchWatchedPage(pageErrors);
    close = () => watched.browser.close();
    page = watched.page;
    await signIn(page, relay);
    page.on('request', (r: Request) => requested.push(new URL(r.url()).pathname));
  });
  afterAll(async () => {
    await close();
    await relay?.close();
  });

  it('lists the recording with its device, shell, start, duration and size; the player loads only with Play', async () => {
    await page.goto(`${relay.url}/console/terminal`);
    const row = page.locator(`[data-recording="${recordingId}"]`);
    await row.waitFor();
    const text = await row.innerText();
    expect(text).toContain('audit');
    // The device by the name the Devices page shows, not its id (issue 36.7).
    expect(text).toContain('Recorded phone');
    expect(text).not.toContain('rec-phone-1');
    expect(text).toMatch(/\b[0-9a-f]{8}\b/);
    expect(text).toMatch(/\d+(\.\d+)? (B|KiB)/);
    expect(text).toMatch(/\ds/);
    expect(await page.locator('main').innerText()).toContain('Every shell is recorded');
    const scriptsBefore = requested.filter((p) => p.endsWith('.js')).length;
    expect(requested.some((p) => p.includes('recordings/'))).toBe(false);
    await shots(page, 'terminal-recordings');

    await row.getByRole('button', { name: /Play the recording/ }).click();
    await page.locator('[data-testid="recording-player"] .ap-term').waitFor();
    // Its own chunk, fetched now, and the recording itself.
    expect(requested.filter((p) => p.endsWith('.js')).length).toBeGreaterThan(scriptsBefore);
    expect(requested).toContain(`/console/api/terminal/recordings/${recordingId}`);
  });

  it('plays the recorded text, and seeks back to before the second command and forward again', async () => {
    await screenShows(page, 'second-32', true, 15_000);
    expect(await screenText(page)).toContain('first-21');
    const bar = page.locator('[data-testid="recording-player"] .ap-progressbar .ap-bar');
    await bar.scrollIntoViewIfNeeded();
    await page.locator('[data-testid="recording-player"] .ap-player').hover();
    const box = (await bar.boundingBox())!;
    // Seek near the start (the player's progress bar): the second marker is not on the screen yet.
    await page.mouse.click(box.x + 2, box.y + box.height / 2);
    await screenShows(page, 'second-32', false);
    // And to the end again.
    await page.mouse.click(box.x + box.width - 1, box.y + box.height / 2);
    await screenShows(page, 'second-32');
    await shots(page, 'terminal-recordings-player');
    expect(pageErrors).toEqual([]);
  });

  it('says when recording is off, and how to turn it on', async () => {
    const off = await startRelay({ config: { terminalShell: SHELL } });
    try {
      await signIn(page, off);
      await page.goto(`${off.url}/console/terminal`);
      await page.getByTestId('recording-off').waitFor();
      expect(await page.getByTestId('recording-off').innerText()).toContain('RELAY_TERMINAL_RECORDING=1');
      expect(await page.locator('main').innerText()).toContain('Shells are not recorded');
      await shots(page, 'terminal-recordings-off');
    } finally {
      // Away first: the page's live stream and refetches must not race the relay's shutdown (a 503 while it closes).
      await page.goto('about:blank');
      await off.close();
    }
    expect(pageErrors).toEqual([]);
  });
});
