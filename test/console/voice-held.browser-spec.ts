import type { Locator, Page } from 'playwright-core';
import { bearer, pairPhone, startRelay, type TestRelay } from '../support/harness';
import { call } from '../support/http';
import { AppVoiceSocket, until } from '../support/voice-client';
import { ensureConsoleBuilt, launchWatchedPage, shot, signIn } from './browser';

jest.setTimeout(60_000);

/**
 * The Voice page's held sessions (issue 35.4): a session whose phone lost its route is held for the app's
 * retry window; the page says how long it has left on the relay's clock and what it holds, and what all
 * held sessions hold against their bound.
 */
describe('console Voice page: sessions held for a resume', () => {
  let relay: TestRelay;
  let browser: Awaited<ReturnType<typeof launchWatchedPage>>['browser'];
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    ensureConsoleBuilt();
    relay = await startRelay({ env: { VOICE_TOOLS_OPENAI_KEY: '', OPENAI_API_KEY: '' } });
    ({ browser, page } = await launchWatchedPage(pageErrors));
    await signIn(page, relay);
  });
  afterAll(async () => {
    await page?.goto('about:blank');
    await browser?.close();
    await relay?.close();
  });

  it('a dropped session shows its time left and the bytes it holds; the note gives the window and the total against its bound', async () => {
    const p = await pairPhone(relay, { device: { device_name: 'Held phone', device_id: 'held-phone' } });
    p.phone.close();
    const created = await call(relay, 'POST', '/voice/output/session', {}, bearer(p.token));
    const id = created.body.session_id as string;
    const v = new AppVoiceSocket(relay, created.body.websocket_path as string, bearer(p.token), false);
    expect(await v.open()).toBe(101);
    v.send({ type: 'response.create', text: 'A short answer the phone never heard to the end.' });
    await until(() => v.has('voice.response.done'), 30_000, 'the answer');
    await v.drop();
    await until(() => relay.loop.models.voice.session(id)?.detached === true, 10_000, 'the drop, durable');
    relay.clock.advance(10_000);

    await page.goto(`${relay.url}/console/voice`);
    const held = page.getByTestId('voice-open-sessions').locator(`tr[data-session="${id}"]`);
    await expectText(
      held,
      /Voice output dropped, held for a resume 4 min (4\d|50) s left · \d+(\.\d)? KiB held for it phone [A-Za-z0-9_-]{8} offline/,
    );
    await expectText(page.getByTestId('voice-held'), /held 5 min for the phone .* 1 session held now, \d+(\.\d)? KiB of at most 32 MiB together/);
    await expectText(page.getByTestId('voice-stats'), /Open sessions 1 1 held for a resume/);
    await page.screenshot({ path: shot('voice-held-session'), fullPage: true });

    // Resumed, it streams again: no time left to show.
    expect(await v.resume(created.body.resume_token as string)).toBe(101);
    await until(() => v.has('voice.session.resumed'));
    await expectText(held, /streaming/);
    await expectText(page.getByTestId('voice-held'), /None is held now/);
    v.ws.close(1000);
    expect(pageErrors).toEqual([]);
  });
});

async function expectText(locator: Locator, re: RegExp, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last = ((await locator.innerText().catch(() => '')) ?? '').replace(/\s+/g, ' ').trim();
    if (re.test(last)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`expected ${re} in: ${last}`);
}
