import type { INestApplicationContext } from '@nestjs/common';
import { WsAdapter } from '@nestjs/platform-ws';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';

/** An upgrade another module answers (relay voice's `/voice/...` sockets): true when it took the request. */
export type UpgradeRoute = (req: IncomingMessage, socket: Duplex, head: Buffer) => boolean;

export type UpgradeGate = (req: IncomingMessage) => { ok: true } | { ok: false; status: number; message: string; headers?: Record<string, string> };

/**
 * WsAdapter with the relay's handshake gate (a real 403/429/503 before the 101), no per-message
 * deflate, a bounded frame size, and no `{event, data}` message binding: phone frames are envelopes,
 * handled by PhoneHub.
 */
export class RelayWsAdapter extends WsAdapter {
  constructor(
    app: INestApplicationContext,
    private readonly gate: () => UpgradeGate,
    private readonly maxPayload = 16 * 1024 * 1024,
    private readonly routes: () => UpgradeRoute[] = () => [],
  ) {
    super(app);
  }

  /**
   * Nest's adapter answers upgrades by exact path and destroys the rest; voice sockets carry a session id
   * in their path. Its listener is wrapped once: routes of other modules first, then Nest's own.
   */
  override ensureHttpServerExists(port: number, httpServer?: Server): Server | undefined {
    const known = (this as unknown as { httpServersRegistry: Map<number, unknown> }).httpServersRegistry.has(port);
    const out = super.ensureHttpServerExists(port, httpServer as never) as Server | undefined;
    const server = httpServer ?? out;
    if (known || !server) return out;
    const nest = server.listeners('upgrade') as Array<(req: IncomingMessage, socket: Duplex, head: Buffer) => void>;
    server.removeAllListeners('upgrade');
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      for (const route of this.routes()) if (route(req, socket, head)) return;
      for (const l of nest) l.call(server, req, socket, head);
    });
    return out;
  }

  override create(port: number, options: Record<string, unknown> & { path?: string } = {}): unknown {
    return super.create(port, {
      ...options,
      perMessageDeflate: false,
      maxPayload: this.maxPayload,
      verifyClient: (
        info: { req: IncomingMessage },
        cb: (ok: boolean, status?: number, message?: string, headers?: Record<string, string>) => void,
      ) => {
        const verdict = this.gate()(info.req);
        if (verdict.ok) cb(true);
        else cb(false, verdict.status, verdict.message, verdict.headers);
      },
    } as never);
  }

  /**
   * Nest logs every socket error at error level. A frame past `maxPayload` (ws closes with 1009), bad
   * UTF-8, a bad opcode or an unmasked frame is the client's fault (ws names it `WS_ERR_*`): a warning.
   * Other socket errors (resets) are the network's: debug (PhoneHub logs them too). The server's own: error.
   */
  override bindErrorHandler(server: WebSocketServer): WebSocketServer {
    server.on('connection', (ws: WebSocket) =>
      ws.on('error', (err: Error & { code?: string }) => {
        if (err.code?.startsWith('WS_ERR_'))
          this.logger.warn(`phone socket closed: the client sent a frame the relay does not take (${err.code}: ${err.message.slice(0, 120)})`);
        else this.logger.debug(`phone socket error: ${err.message.slice(0, 120)}`);
      }),
    );
    server.on('error', (err: Error) => this.logger.error(err));
    return server;
  }

  override bindMessageHandlers(): void {
    // PhoneHub reads raw frames itself.
  }

  override bindClientDisconnect(): void {
    // PhoneHub listens for each socket's close itself; no gateway implements handleDisconnect, so Nest's
    // per-socket close listener (a closure feeding a Subject nobody reads) is not added.
  }
}
