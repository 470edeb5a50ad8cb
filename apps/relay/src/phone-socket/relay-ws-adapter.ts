import type { INestApplicationContext } from '@nestjs/common';
import { WsAdapter } from '@nestjs/platform-ws';
import type { IncomingMessage } from 'node:http';

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
  ) {
    super(app);
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

  override bindMessageHandlers(): void {
    // PhoneHub reads raw frames itself.
  }

  override bindClientDisconnect(): void {
    // PhoneHub listens for each socket's close itself; no gateway implements handleDisconnect, so Nest's
    // per-socket close listener (a closure feeding a Subject nobody reads) is not added.
  }
}
