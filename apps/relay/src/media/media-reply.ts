import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { ServedRange } from '@svc/domain';
import type { Logger } from 'pino';
import { pumpFile } from './file-pump';
import type { OpenedFile } from './media-files';
import { contentDisposition, etagOf, ifRangeHolds, notModified, parseRange } from './media-http';

import { STREAM_CHUNK } from './file-pump';

type Meta = { contentType: string; fileName: string | null; sensitive: boolean };

/**
 * The one place that writes a file as an HTTP response (immich's `sendFile` shape): validators, 304,
 * ranges (206/416), the safety headers, then the bytes. The media service decides what may be sent and
 * opens it; this writes it. Responses still streaming are held so an orderly shutdown can cut them (a
 * stalled client must not hold it up) and leave no file open.
 */
export class MediaReplies {
  private readonly transfers = new Map<ServerResponse, Promise<boolean>>();

  constructor(private readonly logger: Logger) {}

  /** Cuts transfers still in progress and waits for their files to close. */
  async cutTransfers(): Promise<void> {
    const cut = [...this.transfers];
    for (const [res] of cut) res.destroy();
    await Promise.allSettled(cut.map(([, done]) => done));
  }

  /** The console's image preview: a raster image, never cached, nothing else allowed to run in it. */
  async sendPreview(reply: FastifyReply, opened: OpenedFile, contentType: string): Promise<void> {
    try {
      const size = Number(opened.stat.size);
      reply
        .code(200)
        .header('content-type', contentType)
        .header('content-length', String(size))
        .header('cache-control', 'no-store')
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'")
        .header('cross-origin-resource-policy', 'same-origin');
      if (size === 0) {
        await reply.send(Readable.from([]));
        return;
      }
      await this.transfer(reply, 200, opened, 0, size - 1);
    } finally {
      await opened.handle.close().catch(() => undefined);
    }
  }

  /**
   * Sends bytes `start..end` of an opened file as the body of a hijacked reply (pumpFile reuses its buffers,
   * see there). The file is closed before this settles, whether the client took every byte or went away;
   * closing a FileHandle twice is a no-op, so the callers' own `finally` stays as the guard for early exits.
   */
  private async transfer(reply: FastifyReply, status: number, opened: OpenedFile, start: number, end: number): Promise<boolean> {
    reply.hijack();
    reply.raw.writeHead(status, reply.getHeaders() as OutgoingHttpHeaders);
    const res = reply.raw;
    const done = pumpFile(opened.handle, start, end, res, STREAM_CHUNK).finally(() => opened.handle.close().catch(() => undefined));
    this.transfers.set(res, done);
    try {
      return await done;
    } finally {
      this.transfers.delete(res);
    }
  }

  /**
   * Streams an opened file with validators and ranges. `record` runs (durably) before the first byte;
   * the handle is closed here whatever happens.
   */
  async sendFile(req: FastifyRequest, reply: FastifyReply, opened: OpenedFile, meta: Meta, record: (s: ServedRange) => Promise<void>): Promise<void> {
    try {
      const size = Number(opened.stat.size);
      const mtimeMs = Number(opened.stat.mtimeMs);
      const etag = etagOf(opened.fileId, opened.stat.size, opened.stat.mtimeNs);
      const validators = (): FastifyReply =>
        reply
          .header('etag', etag)
          .header('last-modified', new Date(mtimeMs).toUTCString())
          .header('cache-control', meta.sensitive ? 'no-store' : 'private, no-cache');
      if (notModified(req.headers, etag, mtimeMs)) {
        await validators().code(304).send();
        return;
      }
      const range = ifRangeHolds(req.headers, etag, mtimeMs) ? parseRange(req.headers.range, size) : ({ kind: 'full' } as const);
      if (range.kind === 'unsatisfiable') {
        await validators()
          .code(416)
          .header('content-range', `bytes */${size}`)
          .send({ ok: false, error: `the range is outside the file (${size} bytes)`, code: 'media.range_not_satisfiable' });
        return;
      }
      const start = range.kind === 'partial' ? range.start : 0;
      const end = range.kind === 'partial' ? range.end : size - 1;
      const status = range.kind === 'partial' ? 206 : 200;
      // Recorded (durably) before any header is set: a refusal here still gets a clean error reply.
      if (req.method !== 'HEAD') await record({ status, start, end, size });
      validators()
        .code(status)
        .header('content-type', meta.contentType)
        .header('content-disposition', contentDisposition(meta.fileName))
        .header('accept-ranges', 'bytes')
        .header('content-length', String(Math.max(0, end - start + 1)))
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', 'sandbox');
      if (meta.sensitive) reply.header('x-media-sensitive', '1');
      if (range.kind === 'partial') reply.header('content-range', `bytes ${start}-${end}/${size}`);
      if (req.method === 'HEAD' || end < start) {
        await reply.send(Readable.from([]));
        return;
      }
      const complete = await this.transfer(reply, status, opened, start, end);
      if (!complete) this.logger.debug({ status, start, end }, 'media: transfer ended early (client gone)');
    } finally {
      await opened.handle.close().catch(() => undefined);
    }
  }
}
