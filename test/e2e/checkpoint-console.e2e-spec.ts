import { checkNote, parseCheckpointText, parseNote, parseVkey } from '@svc/events/merkle/note';
import type { CheckpointKeyView, CheckpointMade } from '@svc/console-api';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { pairPhone, readEvents, startRelay, tempHome, type TestRelay, operatorHeaderFor } from '../support/harness';
import { operatorFetch } from '../support/http';
import { svc } from '../support/cli';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

/** The Store page's checkpoints over a real relay: the key to copy, a signed head to download, and the route's refusals. */

const json = { 'content-type': 'application/json' };
const ROUTE = '/console/api/store/checkpoint';
/** What a local browser never sends: a foreign Host (DNS rebinding), a cross-site Origin, a proxy's header. */
const FOREIGN: Array<Record<string, string>> = [{ host: 'evil.example' }, { origin: 'http://evil.example' }, { 'x-forwarded-for': '203.0.113.9' }];

function rawRequest(url: string, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: { ...operatorHeaderFor(url), ...headers } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const signed = (relay: TestRelay) => readEvents(relay.home).filter((e) => e.type === 'store.checkpoint_signed');

describe('console Store: signed checkpoints', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay();
    await pairPhone(relay).then((p) => p.phone.close());
    while (relay.loop.models.connections.count() > 0) await new Promise((r) => setTimeout(r, 10));
    await relay.loop.drain();
  });
  afterAll(() => relay?.close());

  it('shows the public key and key id, the same key the CLI prints (one key file under the home, 0600)', async () => {
    const res = await fetch(`${relay.url}${ROUTE}`);
    expect(res.status).toBe(200);
    const view = (await res.json()) as CheckpointKeyView;
    expect(view).toMatchObject({ ok: true, algorithm: 'ed25519' });
    expect(Buffer.from(view.public_key, 'base64')).toHaveLength(32);
    const file = path.join(relay.home, 'relay', 'checkpoint-key.pem');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const cli = await svc(['relay', 'events', 'public-key'], { SVC_HOME: relay.home });
    expect(cli.stdout).toBe(`public key  ${view.public_key}\nkey id      ${view.key_id}\n`);
    // The private half is in no answer, no log line and no event.
    const secret = fs.readFileSync(file, 'utf8').split('\n')[1];
    expect(JSON.stringify(view)).not.toContain(secret);
    expect(relay.logs.join('')).not.toContain(secret);
    expect(JSON.stringify(readEvents(relay.home))).not.toContain(secret);
  });

  it('signs the durable head, records the act as an event, and the checkpoint verifies with the CLI against the live log', async () => {
    const head = { seq: relay.loop.lastSeq, hash: relay.loop.lastHash };
    const res = await fetch(`${relay.url}${ROUTE}`, { method: 'POST', headers: json, body: '{}' });
    expect(res.status).toBe(200);
    const made = (await res.json()) as CheckpointMade;
    const vkey = (await svc(['relay', 'events', 'vkey'], { SVC_HOME: relay.home })).stdout.trim();
    // A C2SP checkpoint of the tree of the head, signed by the log's key (the form the CLI writes; issue 39).
    expect(made).toMatchObject({ ok: true, form: 'c2sp-note', size: head.seq, vkey, file_name: `svc-checkpoint-${head.seq}.txt` });
    const note = parseNote(made.note);
    expect(parseCheckpointText(note.text)).toMatchObject({ origin: vkey.split('+')[0], size: head.seq });
    expect(parseCheckpointText(note.text).root.toString('base64')).toBe(made.root);
    expect(checkNote(note, [parseVkey(vkey)]).map((s) => s.name)).toEqual([vkey.split('+')[0]]);
    // Durable before the answer: the event follows the head it signed.
    const events = signed(relay);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      seq: head.seq + 1,
      actor: 'operator',
      data: { seq: head.seq, hash: head.hash, keyId: made.key_id, by: 'operator' },
    });
    expect(JSON.stringify(events[0])).not.toContain(note.signatures[0].signature.toString('base64'));

    const view = (await (await fetch(`${relay.url}${ROUTE}`)).json()) as CheckpointKeyView;
    expect(view.vkey).toBe(vkey);
    const file = path.join(tempHome(), made.file_name);
    fs.writeFileSync(file, made.note);
    const r = await svc(['relay', 'events', 'verify', '--checkpoint', file, '--vkey', view.vkey], { SVC_HOME: relay.home });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('(C2SP signed note)');
    expect(r.stdout).toContain(`same root at size ${head.seq}) by 1 record`);
  });

  it('refuses a LAN peer, a foreign Host, a cross-site Origin and a proxy on both routes, writing nothing', async () => {
    const before = signed(relay).length;
    for (const method of ['GET', 'POST'] as const) {
      for (const headers of FOREIGN) {
        const res = await rawRequest(`${relay.url}${ROUTE}`, method, { ...json, ...headers }, method === 'POST' ? '{}' : undefined);
        expect([method, headers, res.status]).toEqual([method, headers, 403]);
      }
      const res = await relay.app
        .getHttpAdapter()
        .getInstance()
        .inject({ method, url: ROUTE, remoteAddress: '192.168.1.20', headers: json, ...(method === 'POST' ? { payload: '{}' } : {}) });
      expect([method, res.statusCode]).toEqual([method, 403]);
    }
    expect(signed(relay)).toHaveLength(before);
  });

  it('takes JSON only, and only {}: a form, a text body, an array or a field is a clean 4xx, never a signature', async () => {
    const before = signed(relay).length;
    const form = await fetch(`${relay.url}${ROUTE}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'a=1',
    });
    expect(form.status).toBe(415);
    const text = await fetch(`${relay.url}${ROUTE}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' });
    expect(text.status).toBe(415);
    for (const body of ['[]', '"x"', '{"seq":1}', '{"hash":"' + 'a'.repeat(64) + '"}', '{bad']) {
      const res = await fetch(`${relay.url}${ROUTE}`, { method: 'POST', headers: json, body });
      expect([body, res.status]).toEqual([body, 400]);
      expect(await res.json()).toMatchObject({ ok: false });
    }
    expect(signed(relay)).toHaveLength(before);
    expect(relay.logs.join('')).not.toContain('"statusCode":500');
  });
});
