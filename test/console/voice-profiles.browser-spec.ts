import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import WebSocket from 'ws';
import { bearer, pairPhone, readEvents, startRelay, tempHome, type TestRelay } from '../support/harness';
import { solidPng } from '../support/png';
import { ensureConsoleBuilt, launchBrowser, launchWatchedPage, shot, signIn } from './browser';
import { operatorFetch } from '../support/http';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

jest.setTimeout(60_000);

const API_KEY = 'api-key-for-the-voice-page-0123456789';
const SPOKEN = 'Purple elephants recite the shipping forecast';

/** The service home: the default profile (relay enabled) and `work` (SOUL, a skill, memory, an avatar, an API server). */
function profileHome(): string {
  const home = tempHome();
  const work = path.join(home, 'profiles', 'work');
  fs.mkdirSync(path.join(work, 'skills', 'coding', 'refactor'), { recursive: true });
  fs.mkdirSync(path.join(work, 'memories'), { recursive: true });
  fs.writeFileSync(
    path.join(work, 'config.yaml'),
    'description: Work persona\nmodel:\n  default: gpt-5\n  provider: openai\nplatforms:\n  api_server:\n    enabled: true\n    port: 1\n',
  );
  fs.writeFileSync(path.join(work, '.env'), 'API_SERVER_KEY=sk-profile-key-the-page-must-not-show\n');
  fs.writeFileSync(path.join(work, 'SOUL.md'), '# Work soul\nBe brief and exact.\n');
  fs.writeFileSync(path.join(work, 'skills', 'coding', 'refactor', 'SKILL.md'), '---\ndescription: Refactor\n---\n');
  fs.writeFileSync(path.join(work, 'memories', 'people.md'), 'Ana likes tea.\n');
  fs.writeFileSync(path.join(work, 'avatar.png'), solidPng(8, 8, [200, 80, 40]));
  fs.writeFileSync(path.join(home, 'config.yaml'), 'description: Home assistant\nmodel: local-llama\nplugins:\n  enabled: [svc-relay]\n');
  return home;
}

describe('console Voice and Profiles pages in headless chromium', () => {
  let relay: TestRelay;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let context: BrowserContext;
  let page: Page;
  let token: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    ensureConsoleBuilt();
    relay = await startRelay({ home: profileHome(), env: { VOICE_TOOLS_OPENAI_KEY: '', OPENAI_API_KEY: '', API_SERVER_KEY: API_KEY } });
    const p = await pairPhone(relay, { device: { device_name: 'Voice phone', device_id: 'voice-phone' } });
    p.phone.close();
    token = p.token;
    ({ browser, context, page } = await launchWatchedPage(pageErrors));
    await signIn(page, relay);
  });
  afterAll(async () => {
    await browser?.close();
    await relay?.close();
  });

  const url = (p = '', r: TestRelay = relay) => `${r.url}/console/${p}`;

  it('Voice: each provider, whether it can serve and why not, what each section uses, and honest empty lists', async () => {
    await page.goto(url());
    await nav(page, 'Voice').click();
    const providers = page.getByTestId('voice-providers');
    await expectText(
      providers.locator('tr[data-provider="offline"]'),
      /available.*voice output.*realtime voice.*realtime agent.*\/voice\/synthesize.*\/voice\/transcribe/,
    );
    await expectText(
      providers.locator('tr[data-provider="openai"]'),
      /unavailable no API key is available for the openai provider \(set VOICE_TOOLS_OPENAI_KEY/,
    );
    await expectText(page.getByTestId('voice-sections').locator('tr[data-section="voice_output"]'), /Voice output voice_output on offline available/);
    await expectText(page.getByTestId('voice-sections').locator('tr[data-section="realtime_voice"]'), /off offline available .*Turn on/);
    await expectText(page.getByTestId('voice-calls-default'), /\/voice\/synthesize offline available \/voice\/transcribe offline available/);
    await page.getByText('No voice session open').waitFor();
    await page.getByText('No transcribe or synthesize calls yet').waitFor();
    expect(await page.getByTestId('voice-state').count()).toBe(0);
    await page.screenshot({ animations: 'disabled', path: shot('voice-empty'), fullPage: true });
  });

  it('Voice: a session a phone creates appears live, shows streaming while its socket is open, then ends with its reason', async () => {
    await page.goto(url('voice'));
    await page.getByTestId('voice-providers').waitFor();
    const created = await fetch(`${relay.url}/voice/output/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(token) },
      body: '{}',
    });
    const id = ((await created.json()) as { session_id: string }).session_id;
    const row = page.getByTestId('voice-open-sessions').locator(`tr[data-session="${id}"]`);
    await expectText(row, new RegExp(`Voice output waiting for its socket expires in .* phone ${token.slice(0, 8)} offline`));
    const ws = new WebSocket(`${relay.url.replace('http', 'ws')}/voice/output/${id}`, { headers: bearer(token) });
    await new Promise((r) => ws.once('message', r));
    await expectText(row, /streaming/, 8000);
    await page.screenshot({ animations: 'disabled', path: shot('voice-session-live'), fullPage: true });
    ws.close(1000);
    await row.waitFor({ state: 'detached' });
    await expectText(
      page.getByTestId('voice-ended-sessions').locator(`tr[data-session="${id}"]`),
      /Voice output .* offline .* closed before response/,
    );
    await page.getByText('No voice session open').waitFor();
  });

  it('Voice: calls show their outcome and latency, a failure its code, and never the text', async () => {
    const ok = await fetch(`${relay.url}/voice/synthesize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(API_KEY) },
      body: JSON.stringify({ text: SPOKEN }),
    });
    expect(ok.status).toBe(200);
    const failed = await fetch(`${relay.url}/voice/synthesize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(API_KEY) },
      body: JSON.stringify({ text: SPOKEN, provider: 'openai' }),
    });
    expect(failed.status).toBeGreaterThanOrEqual(400);
    const calls = page.getByTestId('voice-calls');
    await expectText(calls.locator('tr[data-outcome="failed"]'), /synthesize failed voice\.no_api_key \d+ ms openai API key/);
    await expectText(calls.locator('tr[data-outcome="ok"]'), new RegExp(`synthesize ok \\d+ ms offline API key ${SPOKEN.length} chars in`));
    await expectText(page.getByTestId('voice-usage'), /offline default 1 synthesis · 1 session /);
    await expectText(page.getByTestId('voice-stats'), /Failed calls 1/);
    expect(await page.locator('body').innerText()).not.toContain('elephants');
    await page.screenshot({ animations: 'disabled', path: shot('voice-calls'), fullPage: true });
  });

  it('Voice: turning voice output off says phones are refused (and they are), turning it on again clears it', async () => {
    await page.getByRole('button', { name: 'Turn off voice output' }).click();
    await expectText(page.getByTestId('voice-state'), /Voice output is off for every phone/);
    await expectText(page.getByTestId('voice-sections').locator('tr[data-section="voice_output"]'), /off/);
    const refused = await fetch(`${relay.url}/voice/output/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(token) },
      body: '{}',
    });
    expect(refused.status).toBe(404);
    expect(
      readEvents(relay.home)
        .filter((e) => e.type === 'voice.settings_changed')
        .at(-1),
    ).toMatchObject({ actor: 'operator', data: { changed: { enabled: false } } });
    await page.screenshot({ animations: 'disabled', path: shot('voice-output-off'), fullPage: true });
    await page.getByRole('button', { name: 'Turn on voice output' }).click();
    await page.getByTestId('voice-state').waitFor({ state: 'detached' });
  });

  it('Voice: the insecure-API-key switch shows its state; allowing it asks first and is recorded as the operator', async () => {
    const card = page.getByTestId('voice-security');
    await expectText(card, /refused Voice calls with the API key from other machines over plain HTTP are refused/);
    await expectText(card, /An API key is set \(API_SERVER_KEY\)\. TLS is off\./);
    await page.getByRole('button', { name: 'Allow…' }).click();
    const dialog = page.getByRole('dialog');
    await expectText(dialog, /anyone on the network path can read it/);
    await dialog.getByRole('button', { name: 'Allow until restart' }).click();
    await expectText(card, /allowed until restart/);
    expect(
      readEvents(relay.home)
        .filter((e) => e.type === 'relay.security_changed')
        .at(-1),
    ).toMatchObject({ actor: 'operator', data: { allowInsecureApiBearer: true } });
    await page.getByRole('button', { name: 'Refuse again' }).click();
    await expectText(card, /^refused/);
    expect(pageErrors).toEqual([]);
  });

  it('Profiles: the catalog as phones see it, with model, provider, SOUL, skills, avatar, API server and relay state; never the key', async () => {
    await nav(page, 'Profiles').click();
    const work = page.getByTestId('profiles-table').locator('tr[data-profile="work"]');
    await expectText(
      work,
      /work Work persona gpt-5 openai relay not enabled offered to phones SOUL · 1 skill not running http:\/\/[^ ]+:1 · key set/,
    );
    await expectText(
      page.getByTestId('profiles-table').locator('tr[data-profile="default"]'),
      /default service home Home assistant local-llama provider not named relay enabled/,
    );
    const avatar = work.locator('img.profile-avatar');
    await expect8px(avatar);
    expect(await page.locator('body').innerText()).not.toContain('sk-profile-key');
    expect(await page.locator('body').innerText()).not.toContain('Be brief');
    await page.getByText('Nothing written through the relay yet').waitFor();
    await page.screenshot({ animations: 'disabled', path: shot('profiles'), fullPage: true });
  });

  it("Profiles: SOUL and memory read-only until Edit; a save over a phone's write is refused and says so; a fresh edit saves as the operator", async () => {
    await page.getByRole('button', { name: 'SOUL and memory of work' }).click();
    const soul = page.getByTestId('profile-file-SOUL.md');
    await expectText(soul.locator('pre'), /# Work soul Be brief and exact\./);
    await expectText(page.getByTestId('profile-file-people.md').locator('pre'), /Ana likes tea\./);
    expect(await page.locator('textarea').count()).toBe(0);
    await soul.getByRole('button', { name: 'Edit SOUL.md' }).click();
    const editor = soul.getByRole('textbox', { name: 'SOUL.md text' });
    await editor.fill('# Work soul\nBe kind, from the console.\n');
    // Meanwhile a phone saves its own SOUL (the app's profile inspector).
    const phoneWrite = await fetch(`${relay.url}/api/profiles/work/soul`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...bearer(token) },
      body: JSON.stringify({ content: '# Work soul\nWritten by the phone.\n' }),
    });
    expect(phoneWrite.status).toBe(200);
    await soul.getByRole('button', { name: 'Save' }).click();
    const error = soul.getByTestId('profile-write-error');
    await expectText(
      error,
      /SOUL\.md changed since you opened it \(a phone, the agent or another tab wrote it\)\. Nothing was written; your text is still in the box\./,
    );
    expect(await editor.inputValue()).toBe('# Work soul\nBe kind, from the console.\n');
    expect(fs.readFileSync(path.join(relay.home, 'profiles', 'work', 'SOUL.md'), 'utf8')).toBe('# Work soul\nWritten by the phone.\n');
    await page.screenshot({ animations: 'disabled', path: shot('profiles-edit-conflict'), fullPage: true });
    await error.getByRole('button', { name: 'Discard my edit and reload' }).click();
    await expectValue(editor, '# Work soul\nWritten by the phone.\n');
    await editor.fill('# Work soul\nWritten by the phone, kept by the operator.\n');
    await soul.getByRole('button', { name: 'Save' }).click();
    await expectText(soul.locator('pre'), /kept by the operator/);
    expect(fs.readFileSync(path.join(relay.home, 'profiles', 'work', 'SOUL.md'), 'utf8')).toBe(
      '# Work soul\nWritten by the phone, kept by the operator.\n',
    );
    const writes = readEvents(relay.home).filter((e) => e.type === 'profile.file_written');
    expect(writes.map((e) => e.actor)).toEqual([`device:${token.slice(0, 8)}`, 'operator']);
    await expectText(page.getByTestId('profile-writes'), /work SOUL\.md .* by operator/);
  });

  it('Profiles: enabling the relay for a profile asks first, names the file, and shows live', async () => {
    await page.getByRole('button', { name: 'Enable the relay for work' }).click();
    const dialog = page.getByRole('dialog');
    await expectText(dialog, new RegExp(`plugins\\.enabled in ${escape(path.join(relay.home, 'profiles', 'work', 'config.yaml'))}`));
    await dialog.getByRole('button', { name: 'Enable' }).click();
    await expectText(page.getByTestId('profiles-table').locator('tr[data-profile="work"]'), /relay enabled/);
    expect(await page.getByRole('button', { name: 'Enable the relay for work' }).count()).toBe(0);
    await expectText(page.getByTestId('profile-writes'), /work relay enabled was absent · by operator/);
    expect(readEvents(relay.home).find((e) => e.type === 'profile.relay_enabled')).toMatchObject({ actor: 'operator' });
  });

  it('both pages in light and dark, at 1280x800 and on a narrow window', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const [w, h, tag] of [
        [1280, 800, 'wide'],
        [390, 844, 'narrow'],
      ] as const) {
        await page.setViewportSize({ width: w, height: h });
        await page.goto(url('voice'));
        await page.getByTestId('voice-providers').waitFor();
        await page.screenshot({ animations: 'disabled', path: shot(`voice-${scheme}-${tag}`), fullPage: true });
        await page.goto(url('profiles'));
        await page.getByTestId('profiles-table').waitFor();
        await page.getByRole('button', { name: 'SOUL and memory of work' }).click();
        await page.getByTestId('profile-file-SOUL.md').waitFor();
        await page.screenshot({ animations: 'disabled', path: shot(`profiles-${scheme}-${tag}`), fullPage: true });
        // Nothing wider than the window (a narrow screen turns the tables into cards).
        expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(w);
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 800 });
    // The one refusal the edit test provoked on purpose (the browser logs every 4xx it loads).
    expect(pageErrors).toEqual(['Failed to load resource: the server responded with a status of 412 (Precondition Failed)']);
  });

  it('a page from another origin can neither edit a SOUL nor read the pages', async () => {
    const evil = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>evil</title>'));
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    try {
      const before = fs.readFileSync(path.join(relay.home, 'profiles', 'work', 'SOUL.md'), 'utf8');
      const evilPage = await context.newPage();
      await evilPage.goto(`http://127.0.0.1:${(evil.address() as { port: number }).port}/`);
      const results = await evilPage.evaluate(async (api) => {
        const out: string[] = [];
        for (const route of ['/profiles/work/soul', '/voice/security'])
          await fetch(`${api}${route}`, {
            method: 'POST',
            mode: 'no-cors',
            headers: { 'content-type': 'text/plain' },
            body: JSON.stringify({ content: 'pwned', if_match: '*', allow_insecure_api_bearer: true }),
          }).then(
            () => out.push('sent'),
            () => out.push('blocked'),
          );
        for (const route of ['/voice', '/profiles/work/soul'])
          out.push(
            await fetch(`${api}${route}`).then(
              () => 'read',
              () => 'unreadable',
            ),
          );
        return out;
      }, `${relay.url}/console/api`);
      expect(results).toEqual(['sent', 'sent', 'unreadable', 'unreadable']);
      await evilPage.close();
      expect(fs.readFileSync(path.join(relay.home, 'profiles', 'work', 'SOUL.md'), 'utf8')).toBe(before);
      const v = (await (await fetch(`${relay.url}/console/api/voice`)).json()) as { security: { allow_insecure_api_bearer: boolean } };
      expect(v.security.allow_insecure_api_bearer).toBe(false);
    } finally {
      evil.close();
    }
  });

  describe('disabled states', () => {
    it('Voice says plainly when no provider can serve; Profiles when discovery is off', async () => {
      const emptyBin = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-no-voice-'));
      const off = await startRelay({
        home: profileHome(),
        env: { VOICE_TOOLS_OPENAI_KEY: '', OPENAI_API_KEY: '', RELAY_VOICE_OFFLINE_BIN_DIR: emptyBin, RELAY_PROFILE_DISCOVERY: '0' },
      });
      try {
        await signIn(page, off);
        await page.goto(url('voice', off));
        await expectText(
          page.getByTestId('voice-state'),
          /No speech provider can serve\. .*offline: the offline provider needs espeak-ng and lame .*openai: no API key/,
        );
        await expectText(
          page.getByTestId('voice-sections').locator('tr[data-section="voice_output"]'),
          /unavailable the offline provider needs espeak-ng and lame/,
        );
        await page.screenshot({ animations: 'disabled', path: shot('voice-no-provider'), fullPage: true });
        await page.goto(url('profiles', off));
        await expectText(page.getByTestId('profiles-state'), /Profile discovery is off on this relay\. RELAY_PROFILE_DISCOVERY=0/);
        expect(await page.getByTestId('profiles-table').count()).toBe(0);
        expect(await page.getByRole('button', { name: 'Rescan now' }).count()).toBe(0);
        await page.screenshot({ animations: 'disabled', path: shot('profiles-discovery-off'), fullPage: true });
      } finally {
        // Away first: the page's live stream must not race the relay's shutdown.
        await page.goto('about:blank');
        await off.close();
        fs.rmSync(emptyBin, { recursive: true, force: true });
      }
    });

    it('Profiles says where profiles go when there are none', async () => {
      const bare = await startRelay();
      try {
        await signIn(page, bare);
        await page.goto(url('profiles', bare));
        await page.getByText('No profiles on this relay').waitFor();
        await expectText(page.locator('.empty').first(), new RegExp(`profiles/<name>/ .* under ${escape(bare.home)}`));
        await page.getByText('Nothing written through the relay yet').waitFor();
        await page.screenshot({ animations: 'disabled', path: shot('profiles-none'), fullPage: true });
      } finally {
        await page.goto('about:blank');
        await bare.close();
      }
    });
  });
});

function nav(page: Page, name: string) {
  return page.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name, exact: true });
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

async function expectText(locator: Locator, re: RegExp, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last = ((await locator.innerText().catch(() => '')) ?? '').replace(/\s+/g, ' ').trim();
    if (re.test(last)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`expected ${re} in ${JSON.stringify(last)}`);
}

async function expectValue(box: Locator, value: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last = await box.inputValue();
    if (last === value) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`expected ${JSON.stringify(value)} in the box, found ${JSON.stringify(last)}`);
}

/** The image loaded (an 8x8 PNG decoded by the browser), not a broken link. */
async function expect8px(img: Locator): Promise<void> {
  await img.waitFor();
  const deadline = Date.now() + 5000;
  let w = 0;
  while (Date.now() < deadline && w === 0) {
    w = await img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth);
    if (w === 0) await new Promise((r) => setTimeout(r, 50));
  }
  expect(w).toBe(8);
}
