import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import {
  epoch,
  checkMediaPath,
  DomainError,
  expireMedia,
  markSensitive,
  recordPathFetch,
  recordTokenFetch,
  registerMedia,
  requireMedia,
  isLiveMedia,
  type MediaEntry,
  type MediaLimits,
  type MediaOrigin,
  type MediaPolicyContext,
} from '@svc/domain';
import type { MediaFile } from '@svc/events';
import type { FastifyReply, FastifyRequest } from 'fastify';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import { Clock } from '../common/loop/clock';
import { relayDir } from '../common/config/config';
import { type RelayConfig } from '../common/config/relay-config';
import { CommandLoop } from '../common/loop/command-loop';
import type { MediaRegistrar, RegisteredMedia } from '../common/media-registrar';
import { Scheduler } from '../common/loop/scheduler';
import { Secrets, secureRandomBytes } from '../common/auth/secrets';
import { LOGGER, RELAY_CONFIG } from '../common/auth/tokens';
import { guessContentType } from './media-http';
import { MediaReplies } from './media-reply';
import { MediaUploads, type FileMeta } from './media-uploads';
import { fileIdOf, openChecked, policyContext, realPathOf, type OpenedFile } from './media-files';
import { mediaInspection } from './media-inspection';
import { OwnedFiles } from './owned-files';

/** 128 random bits, base64url. */
const TOKEN_RE = /^[A-Za-z0-9_-]{22}$/;

/** What the console previews inline, and up to what size. */
export const PREVIEW_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
export const PREVIEW_MAX_BYTES = 10 * 1024 * 1024;

export type RegisterInput = { path: string; content_type?: string; file_name?: string; owned_file?: boolean; sensitive?: boolean };

/**
 * The media registry's host side: decides what may be registered and sent (the policy, safe opens, token
 * and path fetches, the console's preview and inspection) and the owned files' lifecycle (deleted when
 * their last token retires, at orderly shutdown, and at start for files an earlier run left behind).
 * Upload bodies are received by MediaUploads and file responses written by MediaReplies.
 */
@Injectable()
export class MediaService implements MediaRegistrar, OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  readonly limits: MediaLimits;
  readonly policy: MediaPolicyContext;
  /** The relay's own media directory: uploads and owned registrations, deleted when their tokens end. */
  private readonly owned: OwnedFiles;
  private readonly subscription: Subscription;
  /** Receives upload bodies into the owned directory (and holds the temp files still being written). */
  private readonly uploads: MediaUploads;
  /** Writes file responses (and holds the transfers still streaming). */
  private readonly replies: MediaReplies;

  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    private readonly secrets: Secrets,
    scheduler: Scheduler,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.replies = new MediaReplies(logger);
    const media = config.media;
    this.limits = { ttlSeconds: media.ttlSeconds, lruCap: media.lruCap, maxSizeBytes: media.maxSizeBytes };
    this.owned = new OwnedFiles(path.join(relayDir(config), 'media-owned'), loop, logger);
    this.uploads = new MediaUploads(this.owned.dir, media.maxSizeBytes);
    this.policy = policyContext({
      home: media.home,
      svcHome: config.svcHome,
      workspace: media.workspace,
      tmpDir: media.tmpDir,
      allowedRoots: media.allowedRoots,
      strictSandbox: media.strictSandbox,
    });
    scheduler.register('media.expire', (m, now) => expireMedia(m, now));
    this.subscription = loop.bus.ofType('media.expired', 'media.evicted').subscribe((e) => {
      if (e.data.ownedPath !== null) void this.owned.release(e.data.ownedPath);
    });
  }

  ownedDir(): string {
    return this.owned.dir;
  }

  /** Start: every file in the owned directory belongs to an earlier run (its tokens ended with it). */
  async onApplicationBootstrap(): Promise<void> {
    await this.owned.sweepLeftovers((p) => this.uploads.staging(p));
  }

  /** Before the server closes (it waits for open requests): cut transfers still in progress, and wait for their files to close. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.replies.cutTransfers();
  }

  /** Orderly shutdown: owned files and unfinished uploads are removed. */
  async onApplicationShutdown(): Promise<void> {
    this.subscription.unsubscribe();
    await this.uploads.discardAll();
    await this.owned.deleteAll();
  }

  // ---- registration -------------------------------------------------------------------------

  /**
   * `POST /media/register`. A path that names no file is a validation failure of the request (spec 4.4
   * and 7: 400), not a missing resource: the host asked to register something that is not there.
   */
  async register(input: RegisterInput, actor: string): Promise<RegisteredMedia & { sensitive: boolean }> {
    const file = { path: input.path, contentType: input.content_type, fileName: input.file_name, sensitive: input.sensitive };
    try {
      const r = input.owned_file
        ? await this.registerOwned(
            { ...file, contentType: file.contentType ?? guessContentType(file.fileName ?? null), fileName: file.fileName ?? '' },
            actor,
            'register',
          )
        : await this.registerHostPath(file, actor, 'register');
      return { ...r, sensitive: Boolean(input.sensitive) };
    } catch (err) {
      // Spec 4.4 and 7: every validation failure of a registration is a 400 (a missing file, a directory or
      // FIFO, a denied path, one over the cap), as the reference relay answers; its code says which. On
      // /media/by-path the same checks are a policy refusal (403).
      if (err instanceof DomainError && err.code.startsWith('media.') && err.kind !== 'invalid')
        throw new DomainError(err.code, 'invalid', err.message, err.extra);
      throw err;
    }
  }

  async registerOwned(
    file: { path: string; contentType: string; fileName: string; sensitive?: boolean },
    actor: string,
    source: 'register' | 'registrar' = 'registrar',
  ): Promise<RegisteredMedia> {
    const real = await realPathOf(file.path);
    if (path.dirname(real) !== this.owned.dir || this.uploads.staging(real)) {
      throw new DomainError(
        'media.not_owned',
        'invalid',
        `owned_file: only files the relay wrote into its own media directory (${this.owned.dir}) may be owned; register other files without owned_file`,
      );
    }
    const opened = await openChecked(real, { maxSize: this.limits.maxSizeBytes });
    return this.commit(
      opened,
      { contentType: file.contentType, fileName: file.fileName || null, sensitive: Boolean(file.sensitive) },
      true,
      { source },
      actor,
    );
  }

  registerPath(file: { path: string; contentType?: string; fileName?: string; sensitive?: boolean }, actor: string): Promise<RegisteredMedia> {
    return this.registerHostPath(file, actor, 'registrar');
  }

  private async registerHostPath(
    file: { path: string; contentType?: string; fileName?: string; sensitive?: boolean },
    actor: string,
    source: 'register' | 'registrar',
  ): Promise<RegisteredMedia> {
    if (typeof file.path !== 'string' || !path.isAbsolute(file.path) || file.path.includes('\0')) {
      throw new DomainError('media.bad_path', 'invalid', 'path must be an absolute path (starting with /) without NUL bytes');
    }
    const real = await realPathOf(file.path);
    this.assertPolicy(real);
    const opened = await openChecked(real, { maxSize: this.limits.maxSizeBytes, policy: this.policy });
    // Without a type, the name (else the path's own extension) decides; the path itself is never sent.
    const meta = {
      contentType: file.contentType ?? guessContentType(file.fileName || path.basename(real)),
      fileName: file.fileName || null,
      sensitive: Boolean(file.sensitive),
    };
    return this.commit(opened, meta, false, { source }, actor);
  }

  private async commit(opened: OpenedFile, meta: FileMeta, owned: boolean, origin: MediaOrigin, actor: string): Promise<RegisteredMedia> {
    try {
      const token = secureRandomBytes(16).toString('base64url');
      const file: Omit<MediaFile, 'expiresAt'> = {
        tokenDigest: this.digest(token),
        tokenPrefix: token.slice(0, 8),
        path: opened.realPath,
        contentType: meta.contentType,
        fileName: meta.fileName,
        size: Number(opened.stat.size),
        fileId: opened.fileId,
        owned,
        sensitive: meta.sensitive,
      };
      const stored = await this.loop.run(actor, (m, now) => registerMedia(m, file, origin, this.limits, now));
      const last = stored[stored.length - 1];
      const expiresAt =
        last.type === 'media.registered' || last.type === 'media.uploaded' ? Date.parse(last.data.expiresAt) : this.clock.now().getTime();
      return { token, expiresAt: epoch(expiresAt) };
    } finally {
      await opened.handle.close().catch(() => undefined);
    }
  }

  private assertPolicy(realPath: string): void {
    const verdict = checkMediaPath(realPath, this.policy);
    if (!verdict.ok) throw new DomainError(verdict.code, verdict.code === 'media.bad_path' ? 'invalid' : 'forbidden', verdict.reason);
  }

  async markSensitive(token: string, actor: string) {
    const digest = this.digestOf(token);
    await this.loop.run(actor, (m, now) => markSensitive(m, digest, now));
    const entry = this.loop.models.media.byToken(digest);
    return { ok: true as const, token_prefix: entry?.tokenPrefix ?? token.slice(0, 8), sensitive: true };
  }

  // ---- uploads ------------------------------------------------------------------------------

  /** `POST /media/upload`, multipart: MediaUploads stages the file under the cap, then it is registered as owned. */
  async uploadMultipart(req: FastifyRequest, reply: FastifyReply, actor: string) {
    const staged = await this.uploads.fromMultipart(req, reply);
    return this.finishUpload(staged.tmp, staged.meta, 'multipart', actor);
  }

  /** `POST /media/upload`, JSON `{file_name, content_type, content}` with base64 content. */
  async uploadJson(body: unknown, actor: string) {
    const staged = await this.uploads.fromJson(body);
    return this.finishUpload(staged.tmp, staged.meta, 'json', actor);
  }

  private async finishUpload(tmp: string, meta: FileMeta, via: 'multipart' | 'json', actor: string) {
    const final = tmp.replace(/\.part$/, '');
    try {
      await fs.promises.rename(tmp, final);
      const opened = await openChecked(final, { maxSize: this.limits.maxSizeBytes });
      const r = await this.commit(opened, meta, true, { upload: via }, actor);
      return {
        ok: true as const,
        token: r.token,
        expires_at: r.expiresAt,
        sensitive: meta.sensitive,
        size: Number(opened.stat.size),
        content_type: meta.contentType,
        file_name: meta.fileName,
      };
    } catch (err) {
      await fs.promises.rm(tmp, { force: true }).catch(() => undefined);
      await fs.promises.rm(final, { force: true }).catch(() => undefined);
      throw err;
    }
  }

  // ---- fetch --------------------------------------------------------------------------------

  /** `GET /media/{token}`: unknown, malformed or expired tokens are 404. */
  async fetchToken(token: string, req: FastifyRequest, reply: FastifyReply, actor: string): Promise<void> {
    const digest = this.digestOf(token);
    const entry = requireMedia(this.loop.models, digest, this.clock.now());
    const opened = await openChecked(entry.path, {
      maxSize: this.limits.maxSizeBytes,
      expect: { fileId: entry.fileId, realPath: entry.path },
      ...(entry.owned ? {} : { policy: this.policy }),
    });
    await this.replies.sendFile(req, reply, opened, entry, async (served) => {
      await this.loop.run(actor, (m, now) => recordTokenFetch(m, digest, served, now));
    });
  }

  /** MediaRegistrar.readUpload: a phone's own upload (the app's screenshot), read whole. */
  async readUpload(token: string, maxBytes: number): Promise<{ bytes: Buffer; contentType: string; expiresAt: number } | null> {
    if (!TOKEN_RE.test(token)) return null;
    const entry = this.loop.models.media.byToken(this.digest(token));
    if (!entry || entry.source !== 'upload' || !isLiveMedia(entry, this.clock.now()) || entry.size > maxBytes) return null;
    const opened = await openChecked(entry.path, { maxSize: maxBytes, expect: { fileId: entry.fileId, realPath: entry.path } });
    try {
      const bytes = await opened.handle.readFile();
      return { bytes, contentType: entry.contentType, expiresAt: epoch(entry.expiresAt) };
    } finally {
      await opened.handle.close().catch(() => undefined);
    }
  }

  /**
   * The console's image preview (`GET /console/api/media/:ref/preview`, loopback only): `ref` is the
   * token prefix the console lists. Opened exactly like a token fetch (registered identity, policy),
   * only raster images, at most PREVIEW_MAX_BYTES, and nothing recorded: an operator look is not a fetch.
   */
  async preview(ref: string, reply: FastifyReply): Promise<void> {
    const { entry, contentType } = this.previewable(ref);
    const opened = await this.openPreview(entry);
    await this.replies.sendPreview(reply, opened, contentType);
  }

  /** The same image's bytes, opened as `preview` opens it (the console's playback makes thumbnails of them). */
  async previewBytes(ref: string): Promise<{ bytes: Buffer; contentType: string }> {
    const { entry, contentType } = this.previewable(ref);
    const opened = await this.openPreview(entry);
    try {
      return { bytes: await opened.handle.readFile(), contentType };
    } finally {
      await opened.handle.close().catch(() => undefined);
    }
  }

  private previewable(ref: string): { entry: MediaEntry; contentType: string } {
    const entry = this.entryByPrefix(ref);
    const contentType = entry.contentType.split(';')[0].trim().toLowerCase();
    if (!PREVIEW_TYPES.has(contentType)) {
      throw new DomainError('media.not_previewable', 'unsupported', `only images (${[...PREVIEW_TYPES].join(', ')}) have a preview`);
    }
    if (entry.size > PREVIEW_MAX_BYTES) {
      throw new DomainError('media.preview_too_large', 'too_large', `the file is ${entry.size} bytes; previews stop at ${PREVIEW_MAX_BYTES}`);
    }
    return { entry, contentType };
  }

  private openPreview(entry: MediaEntry): Promise<OpenedFile> {
    return openChecked(entry.path, {
      maxSize: Math.min(PREVIEW_MAX_BYTES, this.limits.maxSizeBytes),
      expect: { fileId: entry.fileId, realPath: entry.path },
      ...(entry.owned ? {} : { policy: this.policy }),
    });
  }

  /** The live entry a console ref (token prefix) names; unknown, expired or ambiguous refs are 404. */
  private entryByPrefix(ref: string): MediaEntry {
    const now = this.clock.now();
    const hits = /^[A-Za-z0-9_-]{8}$/.test(ref) ? this.loop.models.media.live(now).filter((e) => e.tokenPrefix === ref) : [];
    if (hits.length !== 1) throw new DomainError('media.not_found', 'not_found', 'no live media entry with that reference');
    return hits[0];
  }

  /**
   * `GET /media/by-path`: the policy is applied to the real path and again to what was opened. `rawPath` and
   * `contentType` come as MediaByPathQuery checked them (absolute without NUL; a media type).
   */
  async fetchByPath(rawPath: string, contentType: string | undefined, req: FastifyRequest, reply: FastifyReply, actor: string): Promise<void> {
    let opened: OpenedFile;
    try {
      const real = await realPathOf(rawPath);
      this.assertPolicy(real);
      opened = await openChecked(real, { maxSize: this.limits.maxSizeBytes, policy: this.policy });
    } catch (err) {
      if (err instanceof DomainError && err.kind === 'forbidden') {
        await this.loop
          .run(actor, () => [{ type: 'media.refused', data: { path: rawPath, code: err.code, reason: err.message } }])
          .catch(() => undefined);
      }
      throw err;
    }
    const name = path.basename(rawPath);
    const meta: FileMeta = { contentType: contentType ?? guessContentType(name), fileName: name, sensitive: false };
    await this.replies.sendFile(req, reply, opened, meta, async (served) => {
      await this.loop.run(actor, () => recordPathFetch(opened.realPath, served));
    });
  }

  // ---- inspection ---------------------------------------------------------------------------

  /** `GET /media/inspect[?token=]` (loopback): every entry, or the one a token names (media-inspection.ts). */
  inspect(token?: string) {
    let entries = this.loop.models.media.all();
    if (token !== undefined) {
      const hit = TOKEN_RE.test(token) ? this.loop.models.media.byToken(this.digest(token)) : undefined;
      if (!hit) throw new DomainError('media.not_found', 'not_found', 'unknown media token');
      entries = [hit];
    }
    return mediaInspection(entries, this.clock.now(), this.owned.dir, this.limits, this.policy);
  }

  private digest(token: string): string {
    return this.secrets.mac('media-token', token);
  }

  /** Malformed tokens are unknown tokens (404), without touching the registry. */
  private digestOf(token: string): string {
    if (!TOKEN_RE.test(token))
      throw new DomainError('media.not_found', 'not_found', 'unknown media token (tokens end when they expire, are evicted or the relay restarts)');
    return this.digest(token);
  }

  /** fileId of a path we just wrote (tests and the registrar use it). */
  static async fileIdOfPath(p: string): Promise<string> {
    return fileIdOf(await fs.promises.stat(p, { bigint: true }));
  }
}
