import { createHash } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Locator, Page } from 'playwright-core';
import type { PhoneSim, SimHandler } from '../../apps/phone-sim/src/phone-sim';
import { pairPhone, startRelay, type Phone, type TestRelay } from '../support/harness';
import { startSim } from '../support/bridge';
import { mcpConnect } from '../support/mcp';
import { ensureConsoleBuilt, launchBrowser, launchWatchedPage, shot, signIn } from './browser';

jest.setTimeout(60_000);

/** The sim's screen is one static tree; this hash also follows the foreground app, so opening an app changes it. */
const foregroundHash: SimHandler = (cmd, sim) =>
  cmd.path === '/screen_hash'
    ? { status: 200, result: { hash: createHash('sha256').update(`${sim.phone.state.currentApp}|${sim.screenHash()}`).digest('hex') } }
    : null;

/**
 * The Bridge page plays an MCP session back (issue 40, item 6): an agent drives the phone simulator through the
 * SDK's client, and the page at phone width lists its steps in order with their arguments, outcome, whether the
 * screen changed, and thumbnails of the session's screenshots, then "media expired" once those are gone.
 */
describe('console Bridge page: an MCP session played back', () => {
  let relay: TestRelay;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  let phone: PhoneSim;
  let agent: { phone: Phone; token: string };
  let client: Client;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    ensureConsoleBuilt();
    relay = await startRelay();
    phone = await startSim(relay, {
      mode: 'app',
      deviceId: 'play-phone',
      deviceName: 'Playback Pixel',
      handlers: { '/screen_hash': foregroundHash },
    });
    agent = await pairPhone(relay, { device: { device_id: 'play-agent', device_name: 'Agent' } });
    ({ client } = await mcpConnect(relay, agent.token, { name: 'playback-agent' }));
    const call = (name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: { device: 'play-phone', ...args } });
    await call('android_screenshot', { max_side: 300 });
    await call('android_open_app', { package: 'com.android.chrome' });
    await call('android_tap', { x: 20, y: 40 });
    await call('android_read_screen');
    await call('android_screenshot', { max_side: 300 });
    ({ browser, page } = await launchWatchedPage(pageErrors));
    await page.setViewportSize({ width: 390, height: 844 });
    await signIn(page, relay);
  });
  afterAll(async () => {
    await page?.goto('about:blank');
    await client?.close();
    phone?.stop();
    agent?.phone.close();
    await browser?.close();
    await relay?.close();
  });

  const steps = () => page.locator('[data-testid="trail-steps"] li.trail-step');
  const overflow = () => page.evaluate<number>('document.scrollingElement.scrollWidth - window.innerWidth');

  it('at 390 px: the steps in order, with arguments, outcome, evidence and thumbnails, and no sideways scroll', async () => {
    await page.goto(`${relay.url}/console/bridge`);
    await steps().first().waitFor();
    expect(await steps().evaluateAll((els) => els.map((e) => e.getAttribute('data-path')))).toEqual([
      '/screenshot',
      '/open_app',
      '/tap',
      '/screen',
      '/screenshot',
    ]);
    const open = steps().nth(1);
    await expectText(open, /POST \/open_app/);
    await expectText(open, /package: com\.android\.chrome/);
    await expectText(open, /screen changed/);
    await expectText(steps().nth(2), /screen unchanged/);
    await expectText(steps().nth(3), /no evidence/);
    // The open_app step shows the screenshot before it and the one after it, loaded as images.
    const thumbs = open.locator('img.trail-thumb');
    expect(await thumbs.count()).toBe(2);
    // Read in the page: the test has no DOM types.
    await page.waitForFunction(`[...document.querySelectorAll('li.trail-step[data-path="/open_app"] img.trail-thumb')]
      .every((i) => i.complete && i.naturalWidth > 0)`);
    expect(await overflow()).toBeLessThanOrEqual(1);
    // Nothing of the agent's token on the page.
    expect(await page.content()).not.toContain(agent.token);
    await open.scrollIntoViewIfNeeded();
    await page.screenshot({ animations: 'disabled', path: shot('mcp-playback-390'), fullPage: true });
    expect(pageErrors).toEqual([]);
  });

  it('once the screenshots’ media expired, each thumbnail is a "media expired" placeholder', async () => {
    relay.clock.advanceSeconds(86_400 * 2);
    await relay.sweep();
    // Two days on, the console's own sign-in has lapsed too: a fresh link, as an operator would open.
    await signIn(page, relay);
    await page.goto(`${relay.url}/console/bridge`);
    await steps().first().waitFor();
    await expectText(steps().nth(1), /media expired.*media expired/);
    expect(await page.locator('img.trail-thumb').count()).toBe(0);
    expect(await overflow()).toBeLessThanOrEqual(1);
    await page.screenshot({ animations: 'disabled', path: shot('mcp-playback-expired-390'), fullPage: true });
    expect(pageErrors).toEqual([]);
  });
});

async function expectText(locator: Locator, re: RegExp, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last = ((await locator.innerText().catch(() => '')) ?? '').replace(/\s+/g, ' ');
    if (re.test(last)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`expected ${re} in: ${last}`);
}
