'use strict';
// The baseline: bare fastify doing the minimum the same routes must do. /health answers the same JSON;
// /sessions checks a bearer the same way the relay does (HMAC digest, Map lookup) and returns 100
// session objects of the relay's shape, sorted by last_seen.
const { createHmac, randomBytes } = require('node:crypto');
const Fastify = require('fastify');

const key = randomBytes(32);
const digest = (t) => createHmac('sha256', key).update('credential\0').update(t).digest('base64url');
const BEARER_RE = /^Bearer\s+([A-Za-z0-9_\-.~+/=]{16,512})\s*$/i;

const sessions = new Map();
let firstToken = '';
const now = Date.now();
for (let i = 0; i < 100; i++) {
  const token = randomBytes(32).toString('base64url');
  if (!firstToken) firstToken = token;
  sessions.set(digest(token), {
    tokenPrefix: token.slice(0, 8),
    deviceId: `dev-${i}`,
    deviceName: `Phone ${i}`,
    createdAt: now - i * 1000,
    lastSeen: now - i * 500,
    expiresAt: now + 30 * 86400_000,
    // The relay's default grant set (WIRE.md), clamped to the session.
    grants: {
      chat: now + 30 * 86400_000,
      terminal: now + 30 * 86400_000,
      tui: now + 30 * 86400_000,
      bridge: now + 7 * 86400_000,
      'voice:config': now + 30 * 86400_000,
      'voice:stt': now + 30 * 86400_000,
      'voice:tts': now + 30 * 86400_000,
      'voice:realtime': now + 30 * 86400_000,
      desktop: now + 7 * 86400_000,
    },
  });
}
const epoch = (ms) => (ms === null ? null : Math.floor(ms / 1000));

const app = Fastify({ logger: false });
app.get('/health', async () => ({ status: 'ok', version: '0.1.0', clients: 0, sessions: sessions.size }));
app.get('/sessions', async (req, reply) => {
  const m = BEARER_RE.exec(req.headers.authorization || '');
  const me = m && sessions.get(digest(m[1]));
  if (!me) return reply.code(401).send({ ok: false, error: 'unknown token', code: 'auth.invalid_token' });
  const t = Date.now();
  const list = [];
  for (const s of sessions.values()) if (s.expiresAt > t) list.push(s);
  list.sort((a, b) => b.lastSeen - a.lastSeen);
  const out = [];
  for (const s of list) {
    const grants = {};
    for (const ch in s.grants) {
      const until = s.grants[ch];
      if (until === null || until > t) grants[ch] = epoch(until);
    }
    out.push({
      token_prefix: s.tokenPrefix,
      device_name: s.deviceName,
      device_id: s.deviceId,
      device_model: null,
      device_platform: null,
      created_at: epoch(s.createdAt),
      last_seen: epoch(s.lastSeen),
      expires_at: epoch(s.expiresAt),
      grants,
      transport_hint: null,
      online: false,
      is_current: s === me,
    });
  }
  return { sessions: out };
});

app.listen({ port: 0, host: '127.0.0.1' }).then(() => {
  process.on('message', async (msg) => {
    if (msg && msg.cpu) return process.send({ cpu: process.cpuUsage() });
    if (msg && msg.stop) {
      await app.close();
      process.exit(0);
    }
  });
  process.send({ ready: true, url: `http://127.0.0.1:${app.server.address().port}`, token: firstToken });
});
