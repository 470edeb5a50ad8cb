'use strict';
// The baselines of bench/footprint.js and bench/side-by-side.js, each a process of its own on PORT, answering
// GET /health and, where it has one, a WebSocket on /ws that answers a first `system/auth` frame with `auth.ok`:
//   node       bare node:http + ws
//   fastify    bare fastify + ws
//   nest       a minimal Nest 11 app on Fastify with WsAdapter (@nestjs/platform-ws) and one route and one gateway
//   files      bare node:http serving the file named by env FILE whole at GET /file (the floor of bench/side-by-side.js's
//              media row), the fastest plain Node path found: read into two reused 1 MiB buffers in turn, each written
//              once the socket has taken the other (256 MiB to curl, 4 alternating rounds: 1.9-2.2 GB/s, against
//              1.2-1.6 for createReadStream at 1 MiB, 1.1-1.4 for this loop at 256 KiB, none better at 2 or 4 MiB); no ws
// and the layers of bench/health-cost.js, each adding one thing the relay has to the one before (no ws):
//   fastify-body    bare fastify answering the relay's /health body (same fields, built and serialized per request)
//   nest-body       the same route on the Fastify instance of a Nest 11 app (FastifyAdapter without middie, as the relay)
//   nest-hooks      + the relay's own callback hooks as no-ops: 4 onRequest, 1 onSend, 1 onResponse
//   nest-multipart  + @fastify/multipart registered on the whole instance (its async onRequest and onResponse hooks)
const kind = process.argv[2];
const port = Number(process.env.PORT);

function wsOn(server) {
  const { WebSocketServer } = require('ws');
  const wss = new WebSocketServer({ server, path: '/ws', perMessageDeflate: false });
  wss.on('connection', (ws) =>
    ws.once('message', () => ws.send(JSON.stringify({ channel: 'system', type: 'auth.ok', payload: { session_token: 'x'.repeat(43) } }))),
  );
}

/** Writes the whole file to res through two reused 1 MiB buffers: one is read while the socket takes the other. */
async function pump(file, res) {
  const fh = await require('node:fs').promises.open(file);
  try {
    const size = 1024 * 1024;
    const bufs = [Buffer.allocUnsafe(size), Buffer.allocUnsafe(size)];
    const flushed = [Promise.resolve(), Promise.resolve()];
    for (let i = 0, pos = 0; ; i ^= 1) {
      await flushed[i];
      const { bytesRead } = await fh.read(bufs[i], 0, size, pos);
      if (bytesRead === 0) break;
      pos += bytesRead;
      const chunk = bytesRead === size ? bufs[i] : bufs[i].subarray(0, bytesRead);
      flushed[i] = new Promise((resolve, reject) => res.write(chunk, (err) => (err ? reject(err) : resolve())));
    }
    await Promise.all(flushed);
    res.end();
  } finally {
    await fh.close();
  }
}

/** The relay's /health body with Secure Link off and the disk guard on (what a default relay answers), built fresh. */
function healthBody() {
  return {
    status: 'ok',
    version: '0.1.0',
    clients: 0,
    sessions: 0,
    client_spelling: 'svc',
    secure_link: {
      display_name: 'svc Secure Link',
      enabled: false,
      status: 'disabled',
      security: 'pinned_tls',
      capabilities: ['relay', 'api', 'dashboard'],
      reach: { enabled: false, state: 'disabled', last_error: null, transport: 'opaque_inner_tls' },
    },
    disk: { free_bytes: 80960638976, total_bytes: 270553174016, min_free_bytes: 268435456, low: false, checked_at: Math.floor(Date.now() / 1000) },
    terminal_recording: false,
  };
}

async function main() {
  if (kind === 'node') {
    const http = require('node:http');
    const server = http.createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end('{"status":"ok"}');
    });
    wsOn(server);
    server.listen(port, '127.0.0.1');
    return;
  }
  if (kind === 'files') {
    const fs = require('node:fs');
    const http = require('node:http');
    const file = process.env.FILE;
    const server = http.createServer((req, res) => {
      if (req.url === '/file' && file) {
        const { size } = fs.statSync(file);
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(size) });
        pump(file, res).catch((err) => res.destroy(err));
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end('{"status":"ok"}');
    });
    server.listen(port, '127.0.0.1');
    return;
  }
  if (kind === 'fastify') {
    const app = require('fastify')();
    app.get('/health', async () => ({ status: 'ok' }));
    await app.ready();
    wsOn(app.server);
    await app.listen({ port, host: '127.0.0.1' });
    return;
  }
  if (kind === 'fastify-body' || kind.startsWith('nest-')) {
    let app = null;
    let instance;
    if (kind === 'fastify-body') instance = require('fastify')();
    else {
      require('reflect-metadata');
      const { Module } = require('@nestjs/common');
      const { NestFactory } = require('@nestjs/core');
      const { FastifyAdapter } = require('@nestjs/platform-fastify');
      class AppModule {}
      Module({})(AppModule);
      const adapter = new FastifyAdapter({ skipMiddie: true });
      app = await NestFactory.create(AppModule, adapter, { logger: false });
      instance = adapter.getInstance();
    }
    if (kind === 'nest-hooks' || kind === 'nest-multipart') {
      for (let i = 0; i < 4; i++) instance.addHook('onRequest', (req, reply, done) => done(req.routeOptions.config === 0 ? new Error() : undefined));
      instance.addHook('onSend', (req, reply, payload, done) => done(null, payload));
      instance.addHook('onResponse', (req, reply, done) => done());
    }
    if (kind === 'nest-multipart') await instance.register(require('@fastify/multipart'));
    instance.get('/health', { config: { auth: 'public' } }, async (req, reply) => {
      reply.header('Cache-Control', 'no-store');
      return healthBody();
    });
    if (app) {
      await app.init();
      await app.listen(port, '127.0.0.1');
    } else await instance.listen({ port, host: '127.0.0.1' });
    return;
  }
  if (kind === 'nest') {
    require('reflect-metadata');
    const { Controller, Get, Module } = require('@nestjs/common');
    const { NestFactory } = require('@nestjs/core');
    const { FastifyAdapter } = require('@nestjs/platform-fastify');
    const { WsAdapter } = require('@nestjs/platform-ws');
    const { WebSocketGateway, SubscribeMessage } = require('@nestjs/websockets');
    class Health {
      health() {
        return { status: 'ok' };
      }
    }
    Controller()(Health);
    const d = Object.getOwnPropertyDescriptor(Health.prototype, 'health');
    Get('/health')(Health.prototype, 'health', d);
    class Gateway {
      auth() {
        return { event: 'auth.ok', data: {} };
      }
    }
    WebSocketGateway({ path: '/ws' })(Gateway);
    SubscribeMessage('auth')(Gateway.prototype, 'auth', Object.getOwnPropertyDescriptor(Gateway.prototype, 'auth'));
    class AppModule {}
    Module({ controllers: [Health], providers: [Gateway] })(AppModule);
    const app = await NestFactory.create(AppModule, new FastifyAdapter(), { logger: false });
    app.useWebSocketAdapter(new WsAdapter(app));
    await app.listen({ port, host: '127.0.0.1' });
    return;
  }
  throw new Error(`unknown kind ${kind}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
