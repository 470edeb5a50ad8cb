import * as fs from 'node:fs';
import * as path from 'node:path';
import { bearer, pairPhone, startRelay, type TestRelay } from '../support/harness';
import { call, REMOTE, type Json } from '../support/http';

describe('/context/injected', () => {
  let relay: TestRelay;
  let file: string;
  beforeAll(async () => {
    relay = await startRelay({ env: { PHONE_ENABLED: '1', PHONE_HOME_CHANNEL_NAME: 'Pocket' } });
    file = path.join(relay.home, 'relay', 'injected-context.json');
  });
  afterAll(() => relay?.close());
  afterEach(() => fs.rmSync(file, { force: true }));

  const get = (headers: Record<string, string> = {}) => call(relay, 'GET', '/context/injected', undefined, headers);

  it('without configuration: enabled, and only the phone status', async () => {
    const r = await get();
    expect(r.status).toBe(200);
    expect(r.body.enabled).toBe(true);
    expect(r.body.blocks).toHaveLength(1);
    expect(r.body.blocks[0]).toMatchObject({ name: 'phone_status', source: 'relay', truncated: false });
    expect(r.body.blocks[0].text).toContain('Pocket');
    expect(r.body.blocks[0].text).toContain('no phone is connected');
    expect(r.body.errors).toBeUndefined();
  });

  it('shows configured blocks, bounded in count and length', async () => {
    const blocks = [
      { name: 'house rules', text: 'Be brief.' },
      { name: 'long', text: 'x'.repeat(5000) },
    ];
    for (let i = 0; i < 10; i++) blocks.push({ name: `b${i}`, text: `block ${i}` });
    fs.writeFileSync(file, JSON.stringify({ blocks }));
    const r = await get();
    expect(r.body.blocks).toHaveLength(r.body.limits.max_blocks);
    expect(r.body.blocks[1]).toEqual({ name: 'house rules', text: 'Be brief.', source: 'config', truncated: false });
    expect(r.body.blocks[2].truncated).toBe(true);
    expect(r.body.blocks[2].text.length).toBe(r.body.limits.max_block_chars);
    const total = r.body.blocks.reduce((n: number, b: Json) => n + b.text.length, 0);
    expect(total).toBeLessThanOrEqual(r.body.limits.max_total_chars);
    expect(r.body.errors.some((e: string) => e.includes('at most 8 blocks'))).toBe(true);
  });

  it('a file nested past the file limit is refused before it is walked, reported, not fatal', async () => {
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    fs.writeFileSync(file, `{"blocks":[{"name":"kept","text":"would be injected"}],"x":${deep}}`);
    const r = await get();
    expect(r.status).toBe(200);
    expect(r.body.blocks.map((b: Json) => b.name)).toEqual(['phone_status']);
    expect(r.body.errors[0]).toContain('deeper than 256 levels');
  });

  it('enabled: false injects nothing; a broken file is reported, not fatal', async () => {
    fs.writeFileSync(file, JSON.stringify({ enabled: false, blocks: [{ name: 'a', text: 'b' }] }));
    expect((await get()).body).toMatchObject({ enabled: false, blocks: [] });
    fs.writeFileSync(file, '{not json');
    const broken = await get();
    expect(broken.status).toBe(200);
    expect(broken.body.enabled).toBe(true);
    expect(broken.body.errors[0]).toContain('not valid JSON');
    fs.writeFileSync(file, JSON.stringify({ blocks: [{ name: 'ok', text: 'fine' }, { name: 3 }] }));
    const partial = await get();
    expect(partial.body.blocks.map((b: Json) => b.name)).toEqual(['phone_status', 'ok']);
    expect(partial.body.errors).toEqual(['blocks[1] needs a name and a text (strings); left out']);
  });

  it('follows the subscribed phone, and leaves its status out when it does not share it', async () => {
    const { phone, token } = await pairPhone(relay, { device: { device_name: 'Pixel' } });
    phone.send('proactive', 'proactive.subscribe', {}, 's');
    await phone.type('proactive', 'proactive.backlog.complete');
    expect((await get()).body.blocks[0].text).toContain('Pixel is connected');
    phone.send('proactive', 'proactive.subscribe', { share_phone_status: false }, 's2');
    await phone.type('proactive', 'proactive.subscribed');
    await phone.type('proactive', 'proactive.backlog.complete');
    expect((await get()).body.blocks).toEqual([]);
    // Auth: loopback without a bearer; a paired bearer from elsewhere.
    expect((await get(REMOTE)).status).toBe(401);
    expect((await get({ ...REMOTE, ...bearer(token) })).status).toBe(200);
    phone.close();
  });
});
