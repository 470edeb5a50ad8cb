import { DomainError, uploadTooLarge } from '@svc/domain';
import { plainToInstance } from 'class-transformer';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { validate } from '../common/http/validators';
import { STREAM_CHUNK } from './file-pump';
import { CONTENT_TYPE_RE, guessContentType } from './media-http';
import { fsError } from './media-files';
import { UploadJsonDto } from './media.dto';

export type FileMeta = { contentType: string; fileName: string | null; sensitive: boolean };
/** An upload written in full to a temp file in the owned directory, and what it says about itself. */
export type StagedUpload = { tmp: string; size: number; meta: FileMeta };

/**
 * `POST /media/upload`'s bodies, multipart or JSON, received into `upload-<uuid>.part` files in the owned
 * directory under the size cap (enforced while the bytes flow, never after), with their own validation.
 * A refused or broken upload leaves no file. Registering the staged file is MediaService's.
 */
export class MediaUploads {
  /** Temp files being written (removed on abort, and at shutdown). */
  private readonly writing = new Set<string>();

  constructor(
    private readonly ownedDir: string,
    private readonly maxBytes: number,
  ) {}

  /** A temp file an upload is still writing (the start-up sweep leaves it alone). */
  staging(p: string): boolean {
    return this.writing.has(p);
  }

  async discardAll(): Promise<void> {
    for (const p of this.writing) await fs.promises.rm(p, { force: true }).catch(() => undefined);
  }

  /** Multipart: the `file` part is streamed to disk; the cap is enforced while it flows. */
  async fromMultipart(req: FastifyRequest, reply: FastifyReply): Promise<StagedUpload> {
    const max = this.maxBytes;
    const fields: Record<string, string> = {};
    let saved: { tmp: string; size: number; filename: string; mimetype: string } | null = null;
    try {
      const parts = req.parts({ limits: { fileSize: max + 1, files: 1, fields: 8, fieldSize: 4096, parts: 9, headerPairs: 100 } });
      for await (const part of parts) {
        if (part.type === 'field') {
          fields[part.fieldname] = String(part.value);
          continue;
        }
        if (part.fieldname !== 'file') {
          part.file.resume();
          throw new DomainError('media.bad_upload', 'invalid', `multipart: the file goes in a field named "file", not "${part.fieldname}"`);
        }
        saved = { ...(await this.streamToDisk(part.file)), filename: part.filename, mimetype: part.mimetype };
      }
    } catch (err) {
      if (saved) await fs.promises.rm(saved.tmp, { force: true }).catch(() => undefined);
      // The rest of the body is not worth reading: answer and close the connection.
      void reply.header('connection', 'close');
      throw multipartError(err, max);
    }
    if (!saved) throw new DomainError('media.bad_upload', 'invalid', 'multipart: no "file" field in the upload');
    const contentType =
      fields.content_type ?? (saved.mimetype && saved.mimetype !== 'application/octet-stream' ? saved.mimetype : guessContentType(saved.filename));
    if (!CONTENT_TYPE_RE.test(contentType) || contentType.length > 255) {
      await fs.promises.rm(saved.tmp, { force: true });
      throw new DomainError('validation_failed', 'invalid', 'content_type must be a media type like image/png');
    }
    const meta: FileMeta = {
      contentType,
      fileName: sanitizeFileName(fields.file_name ?? saved.filename),
      sensitive: fields.sensitive === '1' || fields.sensitive === 'true',
    };
    return { tmp: saved.tmp, size: saved.size, meta };
  }

  /** JSON `{file_name, content_type, content}` with base64 content, under the same cap. */
  async fromJson(body: unknown): Promise<StagedUpload> {
    const dto = plainToInstance(UploadJsonDto, body ?? {});
    const problems = await validate(dto, { whitelist: true, forbidUnknownValues: true });
    if (problems.length > 0) {
      const message = problems.flatMap((p) => Object.values(p.constraints ?? {})).join('; ') || 'invalid upload body';
      throw new DomainError('validation_failed', 'invalid', message);
    }
    const bytes = decodeBase64(dto.content, this.maxBytes);
    const tmp = this.tempPath();
    this.writing.add(tmp);
    try {
      await fs.promises.writeFile(tmp, bytes, { flag: 'wx', mode: 0o600 });
    } catch (err) {
      await fs.promises.rm(tmp, { force: true }).catch(() => undefined);
      throw err;
    } finally {
      this.writing.delete(tmp);
    }
    const fileName = sanitizeFileName(dto.file_name ?? '');
    const meta: FileMeta = { contentType: dto.content_type ?? guessContentType(fileName), fileName, sensitive: Boolean(dto.sensitive) };
    return { tmp, size: bytes.length, meta };
  }

  private tempPath(): string {
    return path.join(this.ownedDir, `upload-${randomUUID()}.part`);
  }

  private async streamToDisk(source: Readable): Promise<{ tmp: string; size: number }> {
    const max = this.maxBytes;
    const tmp = this.tempPath();
    this.writing.add(tmp);
    let size = 0;
    try {
      await pipeline(
        source,
        async function* (chunks: AsyncIterable<Buffer>) {
          for await (const chunk of chunks) {
            size += chunk.length;
            if (size > max) throw uploadTooLarge(max);
            yield chunk;
          }
        },
        fs.createWriteStream(tmp, { flags: 'wx', mode: 0o600, highWaterMark: STREAM_CHUNK }),
      );
      if ((source as Readable & { truncated?: boolean }).truncated) throw uploadTooLarge(max);
      return { tmp, size };
    } catch (err) {
      await fs.promises.rm(tmp, { force: true }).catch(() => undefined);
      throw err;
    } finally {
      this.writing.delete(tmp);
    }
  }
}

/** A display name only: no directories, no control characters, at most 255 characters. */
export function sanitizeFileName(raw: string): string | null {
  const base = raw.split(/[/\\]/).pop() ?? '';
  const clean = base
    .replace(/[\x00-\x1f\x7f]/g, '')
    .trim()
    .slice(0, 255);
  return clean === '' || clean === '.' || clean === '..' ? null : clean;
}

/** Strict base64 (standard or url-safe, optional padding, optional `data:...;base64,` prefix). */
export function decodeBase64(content: string, max: number): Buffer {
  const data = content.startsWith('data:') ? content.slice(content.indexOf(',') + 1) : content;
  const compact = data.replace(/[\r\n]/g, '');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(compact) || compact.length % 4 === 1) {
    throw new DomainError('validation_failed', 'invalid', 'content must be base64 (standard or url-safe alphabet)');
  }
  const decodedLength = Math.floor((compact.replace(/(?<!=)=+$/, '').length * 3) / 4);
  if (decodedLength > max) throw uploadTooLarge(max);
  return Buffer.from(compact, 'base64');
}

function multipartError(err: unknown, max: number): unknown {
  if (err instanceof DomainError) return err;
  const code = (err as { code?: string }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return uploadTooLarge(max);
  if (code === 'FST_FILES_LIMIT') return new DomainError('media.bad_upload', 'invalid', 'multipart: send exactly one file, in the field "file"');
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT')
    return new DomainError('media.bad_upload', 'invalid', 'multipart: too many parts or fields');
  if (code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') return new DomainError('media.bad_upload', 'invalid', 'not a multipart/form-data body');
  if (code && code.startsWith('FST_')) return new DomainError('media.bad_upload', 'invalid', `multipart: ${(err as Error).message}`);
  return fsOrAbort(err);
}

function fsOrAbort(err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOSPC') return new DomainError('media.no_space', 'unavailable', 'the relay host is out of disk space');
  if (code && /^E[A-Z]+$/.test(code) && code !== 'ECONNRESET' && code !== 'EPIPE') return fsError(err);
  return new DomainError('media.upload_aborted', 'invalid', 'the upload ended before the file was complete');
}
