import { DomainError } from '@svc/domain';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Upload } from './voice.service';

/**
 * The audio of `POST /voice/transcribe`: multipart/form-data with one file (the first file part, whatever
 * its field name), read no further than `max` bytes (413, and the connection closed, past it). The upload
 * carries a signal that aborts when the caller hangs up, so a transcription stops (the provider kills its
 * programs).
 */
export async function readAudioUpload(req: FastifyRequest, reply: FastifyReply, max: number): Promise<Upload> {
  if (!req.isMultipart())
    throw new DomainError('voice.bad_upload', 'unsupported', 'send the audio as multipart/form-data with a file part', { success: false });
  let upload: Omit<Upload, 'signal'> | null = null;
  try {
    for await (const part of req.parts({ limits: { fileSize: max + 1, files: 1, fields: 8, parts: 9, fieldSize: 1024 } })) {
      if (part.type !== 'file') continue;
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const c of part.file as AsyncIterable<Buffer>) {
        size += c.length;
        if (size > max) {
          void reply.header('connection', 'close');
          throw tooLarge(max);
        }
        chunks.push(c);
      }
      upload = { audio: Buffer.concat(chunks), contentType: part.mimetype ?? '', fileName: part.filename ?? 'audio' };
    }
  } catch (err) {
    if (err instanceof DomainError) throw err;
    const code = (err as { code?: string }).code ?? '';
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge(max);
    throw new DomainError('voice.bad_upload', 'invalid', `malformed multipart body${code ? ` (${code})` : ''}`, { success: false });
  }
  if (!upload) throw new DomainError('voice.bad_upload', 'invalid', 'no audio file in the multipart body', { success: false });
  const gone = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) gone.abort();
  });
  return { ...upload, signal: gone.signal };
}

const tooLarge = (max: number) =>
  new DomainError('voice.audio_too_large', 'too_large', `audio exceeds ${max} bytes (RELAY_VOICE_MAX_AUDIO_BYTES)`, {
    success: false,
    max_bytes: max,
  });
