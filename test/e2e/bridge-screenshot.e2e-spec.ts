import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bearer, readEvents, startRelay, type TestRelay } from '../support/harness';
import { dc, startSim } from '../support/bridge';
import type { PhoneSim } from '../../apps/phone-sim/src/phone-sim';

/** `/screenshot` and path attachments through the real media registry (MEDIA_REGISTRAR). */
describe('Device Control with the media registry', () => {
  let relay: TestRelay;
  let sim: PhoneSim;
  beforeAll(async () => {
    relay = await startRelay();
    sim = await startSim(relay);
  });
  afterAll(async () => {
    sim.stop();
    await relay.close();
  });

  it('/screenshot stores the phone PNG as an owned media file and returns its token', async () => {
    const r = await dc(relay, sim.token!, 'GET', '/screenshot');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ok: true, token: expect.any(String), content_type: 'image/png', width: 54, height: 96 });
    expect(JSON.stringify(r.body)).not.toContain('png_base64');
    const media = await fetch(`${relay.url}/media/${r.body.token}`, { headers: bearer(sim.token!) });
    expect(media.status).toBe(200);
    expect(media.headers.get('content-type')).toContain('image/png');
    const bytes = Buffer.from(await media.arrayBuffer());
    expect(bytes.subarray(1, 4).toString('ascii')).toBe('PNG');
    expect(bytes.length).toBe(r.body.size_bytes);
  });

  it('a phone answer that is not a PNG is a 502, and nothing is registered', async () => {
    sim.handlers['/screenshot'] = () => ({ status: 200, result: { png_base64: Buffer.from('GIF89a not a png').toString('base64') } });
    const r = await dc(relay, sim.token!, 'GET', '/screenshot');
    expect(r.status).toBe(502);
    expect(r.body.code).toBe('bridge.bad_screenshot');
    delete sim.handlers['/screenshot'];
  });

  it('/share_media registers a host path so the phone only sees a token', async () => {
    // Outside <svc_home>: the media policy never serves the relay's own home (secrets, event log).
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-share-')), 'share.txt');
    fs.writeFileSync(file, 'hello');
    let seen: Record<string, unknown> | null = null;
    sim.handlers['/share_media'] = (cmd) => ((seen = cmd.body), { status: 200, result: { ok: true } });
    const r = await dc(relay, sim.token!, 'POST', '/share_media', { attachments: [{ path: file, content_type: 'text/plain' }] });
    expect(r.status).toBe(200);
    expect(JSON.stringify(seen)).not.toContain(file);
    expect((seen as unknown as { attachments: Array<{ media_token: string }> }).attachments[0].media_token).toEqual(expect.any(String));
    expect(JSON.stringify(readEvents(relay.home).filter((e) => e.type.startsWith('bridge.')))).not.toContain(file);
  });
});
