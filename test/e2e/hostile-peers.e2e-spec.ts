import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { WebSocket, WebSocketServer } from 'ws';
import { ManualClock } from '../../apps/relay/src/common/loop/clock';
import { ReachBroker } from '../../apps/relay/src/reach/broker';
import { newId, newToken, tokenSha256 } from '../../apps/relay/src/reach/protocol';
import { bearer, pairPhone, startRelay, tempHome } from '../support/harness';
import { call } from '../support/http';

/** Text frames that are JSON but not an object of the protocol (and one that is not JSON at all). */
const HOSTILE = ['null', '[]', '42', '"x"', '{"type":null}', 'not json'];

const until = async (what: () => boolean | Promise<boolean>, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
};

const listen = async (server: http.Server): Promise<number> => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
};

describe('a peer sending a frame that is JSON but not an object never crashes the process (issue item 5)', () => {
  it('a broker sending null, [], 42, "x", {"type":null} to the relay: each dropped, counted and logged; the relay serves /health and stays connected', async () => {
    const server = http.createServer();
    const wss = new WebSocketServer({ server });
    const hosts: WebSocket[] = [];
    wss.on('connection', (ws) => {
      hosts.push(ws);
      ws.once('message', () => {
        ws.send(JSON.stringify({ type: 'registered', protocol_version: 1 }));
        for (const f of HOSTILE) ws.send(f);
        ws.send(JSON.stringify({ type: 'open', protocol_version: 1, stream_id: null }));
        ws.send(Buffer.from([9, 9, 9]), { binary: true });
      });
    });
    const port = await listen(server);
    const relay = await startRelay({
      env: {
        RELAY_SECURE_LINK_ENABLED: '1',
        RELAY_SECURE_LINK_HOST: '127.0.0.1',
        RELAY_SECURE_LINK_PORT: '0',
        RELAY_EXPERIMENTAL_REACH_ENABLED: '1',
        RELAY_SECURE_LINK_BROKER_URL: `ws://127.0.0.1:${port}`,
        RELAY_SECURE_LINK_BROKER_HOST_TOKEN: newToken(),
      },
      reachBackoff: { baseMs: 50, maxMs: 200 },
    });
    try {
      const reach = async () => (await call(relay, 'GET', '/health')).body.secure_link.reach;
      await until(async () => (await reach()).dropped_frames === HOSTILE.length + 2);
      const health = await call(relay, 'GET', '/health');
      expect(health.status).toBe(200);
      expect(health.body.secure_link.reach).toMatchObject({ state: 'connected', connect_attempts: 1 });
      expect(hosts).toHaveLength(1);
      expect(hosts[0].readyState).toBe(WebSocket.OPEN);
      const warned = relay.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'reach: dropped a malformed frame from the broker');
      expect(warned[0]).toMatchObject({ level: 40, dropped_frames: 1 });
    } finally {
      await relay.close();
      wss.close();
      server.close();
    }
  });

  it('a host sending the same to a real broker: only that host is closed (1008); the broker and another host live on', async () => {
    const dir = tempHome();
    const [idA, idB] = [newId(), newId()];
    const [tokA, tokB] = [newToken(), newToken()];
    const credentials = path.join(dir, 'credentials.json');
    fs.writeFileSync(
      credentials,
      JSON.stringify({ hosts: { [idA]: { host_token_sha256: tokenSha256(tokA) }, [idB]: { host_token_sha256: tokenSha256(tokB) } } }),
    );
    const logs: string[] = [];
    const logger = pino({ level: 'debug' }, new Writable({ write: (c, _e, cb) => (logs.push(c.toString()), cb()) }));
    const broker = new ReachBroker({ credentialsFile: credentials, listen: '127.0.0.1', port: 0, logger });
    await broker.start();
    const host = async (id: string, token: string) => {
      const ws = new WebSocket(broker.url);
      const frames: Array<Record<string, unknown>> = [];
      ws.on('message', (d) => frames.push(JSON.parse(String(d))));
      const closed = new Promise<{ code: number; reason: string }>((r) => ws.on('close', (code, reason) => r({ code, reason: String(reason) })));
      await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
      ws.send(
        JSON.stringify({ type: 'register', protocol_version: 1, role: 'host', host_id: id, connection_id: newId(), credential_kind: 'host', token }),
      );
      await until(() => frames.some((f) => f.type === 'registered'));
      return { ws, frames, closed };
    };
    try {
      const b = await host(idB, tokB);
      for (const f of HOSTILE) {
        const a = await host(idA, tokA);
        a.ws.send(f);
        // Not an object: `unauthorized`; an object without the protocol's version: `unsupported_version`.
        const code = f.startsWith('{') ? 'unsupported_version' : 'unauthorized';
        expect(await a.closed).toEqual({ code: 1008, reason: code });
        expect(a.frames.at(-1)).toEqual({ type: 'error', protocol_version: 1, code });
      }
      const health = await fetch(`http://127.0.0.1:${broker.port}/health`).then((r) => r.json());
      expect(health).toMatchObject({ ok: true, hosts_online: 1 });
      expect(b.ws.readyState).toBe(WebSocket.OPEN);
      b.ws.send(
        JSON.stringify({
          type: 'publish_route',
          protocol_version: 1,
          credential_id: 'route-1',
          token_sha256: tokenSha256(newToken()),
          expires_at: Math.floor(Date.now() / 1000) + 600,
          device_id_hash: 'd',
        }),
      );
      await until(() => b.frames.some((f) => f.type === 'published'));
      expect(logs.join('')).toContain('control frame is not a JSON object');
      b.ws.close();
    } finally {
      await broker.close();
    }
  });

  it('a realtime provider sending them mid-session: the voice session reports voice.provider_bad_frame and keeps working', async () => {
    const server = http.createServer();
    const wss = new WebSocketServer({ server });
    wss.on('connection', (sock) => {
      for (const f of HOSTILE) sock.send(f);
      sock.on('message', (d) => {
        const f = JSON.parse(String(d));
        if (f.type !== 'response.create') return;
        sock.send(JSON.stringify({ type: 'response.audio.delta', delta: Buffer.alloc(4800, 1).toString('base64') }));
        sock.send(JSON.stringify({ type: 'response.audio_transcript.done', transcript: 'still here' }));
        sock.send(JSON.stringify({ type: 'response.done' }));
      });
    });
    const port = await listen(server);
    const relay = await startRelay({
      env: { OPENAI_API_KEY: 'sk-hostile', OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`, RELAY_REALTIME_VOICE_ENABLED: '1' },
    });
    try {
      const p = await pairPhone(relay);
      p.phone.close();
      const id = (await call(relay, 'POST', '/voice/realtime/session', {}, bearer(p.token))).body.session_id as string;
      const ws = new WebSocket(`${relay.url.replace('http', 'ws')}/voice/realtime/${id}`, { headers: bearer(p.token) });
      const got: Array<Record<string, any>> = [];
      ws.on('message', (d) => got.push(JSON.parse(String(d))));
      await until(() => got.length > 0);
      ws.send(JSON.stringify({ type: 'response.create', text: 'hello' }));
      await until(() => got.some((f) => f.type === 'voice.error' && f.code === 'voice.provider_bad_frame'));
      expect((await call(relay, 'GET', '/health')).status).toBe(200);
      // The session still answers: the next response streams from the same provider socket.
      ws.send(JSON.stringify({ type: 'response.create', text: 'again' }));
      await until(() => got.some((f) => f.type === 'voice.transcript.final' && f.text === 'still here'));
      ws.close();
    } finally {
      await relay.close();
      wss.close();
      server.closeAllConnections();
      server.close();
    }
  });

  it('a provider-native agent sending them: each reported as voice.provider_bad_frame, the session keeps working, the relay lives', async () => {
    const server = http.createServer((_req, res) => res.writeHead(404).end('{}'));
    const wss = new WebSocketServer({ server });
    wss.on('connection', (sock) => {
      for (const f of HOSTILE) sock.send(f);
      sock.on('message', (d) => {
        const f = JSON.parse(String(d));
        if (f.type === 'input_audio_buffer.commit')
          sock.send(JSON.stringify({ type: 'conversation.item.input_audio_transcription.completed', transcript: 'heard you' }));
      });
    });
    const port = await listen(server);
    const relay = await startRelay({
      env: { OPENAI_API_KEY: 'sk-native-hostile', OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`, RELAY_REALTIME_VOICE_ENABLED: '1' },
      clock: new ManualClock(new Date().toISOString()),
    });
    try {
      const p = await pairPhone(relay);
      p.phone.close();
      const created = await call(relay, 'POST', '/voice/realtime-agent/session', {}, bearer(p.token));
      expect(created.body.broker_mode).toBe('provider_realtime');
      const ws = new WebSocket(`${relay.url.replace('http', 'ws')}/voice/realtime-agent/${created.body.session_id}`, { headers: bearer(p.token) });
      const got: Array<Record<string, any>> = [];
      ws.on('message', (d) => got.push(JSON.parse(String(d))));
      await until(() => got.length > 0);
      ws.send(
        JSON.stringify({ type: 'input_audio.append', chunk_id: 1, sample_rate: 24000, audio_base64: Buffer.alloc(4800, 1).toString('base64') }),
      );
      await until(() => got.filter((f) => f.type === 'voice.error' && f.code === 'voice.provider_bad_frame').length === HOSTILE.length);
      ws.send(JSON.stringify({ type: 'input_audio.commit' }));
      await until(() => got.some((f) => f.type === 'voice.input_transcript.final' && f.text === 'heard you'));
      expect((await call(relay, 'GET', '/health')).status).toBe(200);
      ws.close();
    } finally {
      await relay.close();
      wss.close();
      server.closeAllConnections();
      server.close();
    }
  });
});
