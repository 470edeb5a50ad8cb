import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@svc/domain';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { atomicWrite } from '../common/atomic-write';
import { CommandLoop } from '../common/loop/command-loop';
import type { ProfileFilesConfig, RelayConfig } from '../common/config/relay-config';
import { readYamlMap } from '../common/agent-config/config-yaml';
import { ConfigFileError } from '../common/agent-config/config-yaml-parse';
import { RELAY_CONFIG } from '../common/auth/tokens';
import { AVATAR_EXTS, findAvatar, imageType } from './profile-avatar';
import { ProfileCatalog } from './profile-catalog.service';
import { memoryListing, shownBytes } from './profile-file-caps';
import { dirInside, etagOfBytes, readInside } from './profile-fs';
import { canonicalProfileName, isFile, isSymlink, listDirs, ProfileLayout } from './profile-layout';

const MAX_SKILLS = 500;
export const MEMORY_FILE_RE = /^[A-Za-z0-9][A-Za-z0-9 _.-]{0,95}\.(md|txt)$/;
const MAX_AVATAR_BYTES = 10 * 1024 * 1024;

/**
 * Spec 4.7's profile files (ProfilesController): a profile's config (its public part for a phone), avatar,
 * skills, SOUL and memory, from the service home's profile layout (`default` is the service home itself,
 * others `profiles/<name>/`). Names are checked (no traversal, no hidden names); files are read within
 * caps and never through a symbolic link (profile-fs.ts): a linked `memories/` or `skills/` directory is
 * refused (403 `profile.symlink`), a linked file is not read; a phone never sees a host path or a config
 * section outside the public schema (description, model.default), since provider sections may hold
 * credentials.
 */
@Injectable()
export class ProfilesService {
  private readonly caps: ProfileFilesConfig;

  constructor(
    private readonly loop: CommandLoop,
    private readonly catalog: ProfileCatalog,
    @Inject(RELAY_CONFIG) config: RelayConfig,
  ) {
    this.caps = config.profileFiles;
  }

  /** `full`: the operator's view (the host path and the whole config); a phone gets the public part. */
  config(asked: string, full: boolean) {
    const name = canonicalProfileName(asked);
    this.home(name);
    const file = this.catalog.layout.configOf(name);
    if (!isFile(file)) throw new DomainError('profile.no_config', 'not_found', `profile "${name}" has no config.yaml`, { profile: name });
    let parsed: Record<string, unknown>;
    try {
      parsed = readYamlMap(file, true);
    } catch (err) {
      // The operator's log names the file (config-yaml.ts onConfigRejected); the answer only says why.
      const tooLarge = err instanceof ConfigFileError && err.problem === 'too_large';
      throw new DomainError(
        tooLarge ? 'profile.config_too_large' : 'profile.config_unreadable',
        'conflict',
        `config.yaml of "${name}" cannot be read: ${(err as Error).message.slice(0, 160)}`,
        { profile: name },
      );
    }
    return { profile: name, path: full ? file : 'config.yaml', config: full ? parsed : publicConfig(parsed), readonly: true };
  }

  /**
   * The first conventional image among the profile's direct children (`avatar`, `profile`, `profile-image`,
   * `profile_image`, `agent`, `icon` x `.png .jpg .jpeg .webp .gif`, case-insensitive, the reference's
   * order). Regular files only (a link is never followed), at most 10 MiB, and its bytes must be that
   * image type: 404 naming the expected names, 415 when not an image.
   */
  avatar(asked: string): { bytes: Buffer; headers: Record<string, string> } {
    const name = canonicalProfileName(asked);
    const home = this.home(name);
    const found = findAvatar(home);
    if (!found)
      throw new DomainError('profile.avatar_not_found', 'not_found', `profile "${name}" has no avatar image`, {
        profile: name,
        wireError: 'profile_avatar_not_found',
        expected_names: ['avatar', 'profile'].flatMap((s) => AVATAR_EXTS.map((e) => `${s}${e}`)),
      });
    const read = readInside(home, [found], MAX_AVATAR_BYTES, { whole: true });
    if (read.state === 'too_large')
      throw new DomainError('profile.avatar_too_large', 'too_large', `${found} is larger than ${MAX_AVATAR_BYTES} bytes`, { profile: name });
    if (read.state !== 'ok')
      throw new DomainError('profile.avatar_not_found', 'not_found', `profile "${name}" has no avatar image`, {
        profile: name,
        wireError: 'profile_avatar_not_found',
      });
    const bytes = read.bytes;
    const type = imageType(bytes);
    if (!type)
      throw new DomainError('profile.avatar_invalid', 'unsupported', `${found} is not a PNG, JPEG, GIF or WebP image`, {
        profile: name,
        wireError: 'profile_avatar_invalid',
      });
    return {
      bytes,
      headers: {
        'content-type': type,
        'cache-control': 'private, max-age=3600',
        'content-disposition': `inline; filename="${found.replace(/["\r\n]/g, '')}"`,
        'x-content-type-options': 'nosniff',
      },
    };
  }

  skills(asked: string) {
    const name = canonicalProfileName(asked);
    const home = this.home(name);
    const root = path.join(home, 'skills');
    refuseLinkedDir(home, 'skills', name);
    const skills: Array<{ name: string; category: string; description: string; path: string; enabled: boolean }> = [];
    for (const category of listDirs(root)) {
      for (const skill of listDirs(path.join(root, category))) {
        if (skills.length >= MAX_SKILLS) continue;
        const read = readInside(home, ['skills', category, skill, 'SKILL.md'], 8192);
        if (read.state !== 'ok') continue;
        skills.push({
          name: skill,
          category,
          description: frontMatterDescription(read.text),
          path: `skills/${category}/${skill}/SKILL.md`,
          enabled: true,
        });
      }
    }
    return { profile: name, skills, total: skills.length };
  }

  /** Whole up to its cap (profile-file-caps.ts); past it cut, `truncated: true`. */
  soul(asked: string) {
    const name = canonicalProfileName(asked);
    const r = readInside(this.home(name), ['SOUL.md'], this.caps.soulMaxBytes, { etag: true });
    if (r.state === 'link')
      throw new DomainError('profile.symlink', 'forbidden', 'SOUL.md is a symbolic link; the relay does not read through links', { profile: name });
    if (r.state !== 'ok') return { profile: name, path: 'SOUL.md', content: '', exists: false, size_bytes: 0, truncated: false };
    return { profile: name, path: 'SOUL.md', content: r.text, exists: true, size_bytes: r.size, truncated: r.truncated, etag: r.etag };
  }

  /**
   * Each file as much as profile-file-caps.ts shows. `etags` (the console, which edits with If-Match): each
   * entry also carries its file's ETag and how many of its bytes are shown.
   */
  memory(asked: string, opts: { etags?: boolean } = {}) {
    const name = canonicalProfileName(asked);
    const home = this.home(name);
    const dir = path.join(home, 'memories');
    refuseLinkedDir(home, 'memories', name);
    const entries = memoryListing(dir, this.caps).flatMap(({ filename, max }) => {
      // A file swapped for a link (or removed) since the listing is left out, never read through.
      const r = readInside(home, ['memories', filename], max, { etag: opts.etags === true });
      if (r.state !== 'ok') return [];
      return {
        name: filename.replace(/\.(md|txt)$/i, ''),
        filename,
        path: `memories/${filename}`,
        content: r.text,
        size_bytes: r.size,
        truncated: r.truncated,
        ...(opts.etags ? { etag: r.etag, shown_bytes: max } : {}),
      };
    });
    return { profile: name, memories_dir: 'memories', entries, total: entries.length };
  }

  /** SOUL.md replaced atomically (see write()); the answer and the new file's ETag (sent as a header). */
  async putSoul(asked: string, content: string, ifMatch: string | null | undefined, actor: string) {
    const name = canonicalProfileName(asked);
    const home = this.home(name);
    const r = await this.write(name, home, ['SOUL.md'], content, this.caps.soulMaxBytes, ifMatch, actor);
    return { body: { ok: true, profile: name, path: 'SOUL.md', bytes_written: r.bytes }, etag: r.etag };
  }

  /** One memory file (`.md` or `.txt`), created or replaced. A `memories/` that is a symbolic link is refused (403). */
  async putMemory(asked: string, filename: string, content: string, ifMatch: string | null | undefined, actor: string) {
    const name = canonicalProfileName(asked);
    const home = this.home(name);
    if (!MEMORY_FILE_RE.test(filename))
      throw new DomainError(
        'validation_failed',
        'invalid',
        'a memory file name is letters, digits, " _.-" (not first), at most 100 characters, ending in .md or .txt',
        { profile: name },
      );
    refuseLinkedDir(home, 'memories', name);
    const r = await this.write(name, home, ['memories', filename], content, this.caps.memoryMaxBytes, ifMatch, actor);
    return { body: { ok: true, profile: name, filename, path: `memories/${filename}`, bytes_written: r.bytes }, etag: r.etag };
  }

  private home(name: string): string {
    if (!ProfileLayout.validName(name))
      throw new DomainError('validation_failed', 'invalid', 'a profile name is letters, digits, "_", "-" and "." (not first), at most 64 characters');
    const dir = this.catalog.layout.homeOf(name);
    if (!dir) throw new DomainError('profile.not_found', 'not_found', `no profile "${name}"`, { profile: name, wireError: 'profile_not_found' });
    return dir;
  }

  /**
   * One profile file write: `content` within the cap (413 past it), `If-Match` honoured when sent (a
   * stale ETag is 412 and nothing is written; the app sends none, so its writes replace the file, unless
   * phones are shown it only in part: refuseBlindCut; `null`,
   * the console's "it did not exist when I read it", is 412 when it exists now), then
   * atomicWrite, then `profile.file_written` with the digest (never the text). The answer's ETag is the
   * new file's. `segments` is the file under the profile's home: no link is written through, neither the
   * file nor a directory on the way (checked again just before the write, the directory's real path
   * under the home's).
   */
  private async write(
    name: string,
    home: string,
    segments: string[],
    content: string,
    max: number,
    ifMatch: string | null | undefined,
    actor: string,
  ): Promise<{ bytes: number; etag: string }> {
    const rel = segments.join('/');
    const size = Buffer.byteLength(content, 'utf8');
    if (size > max)
      throw new DomainError('profile.too_large', 'too_large', `${rel} may be at most ${max} bytes (this is ${size})`, {
        profile: name,
        max_bytes: max,
      });
    const file = path.join(home, ...segments);
    const linked = () =>
      new DomainError('profile.symlink', 'forbidden', `${rel} is a symbolic link; the relay does not write through links`, { profile: name });
    if (isSymlink(file)) throw linked();
    const existing = readInside(home, segments, 0, { etag: true });
    if (existing.state === 'link') throw linked();
    if (existing.state === 'absent' && fs.existsSync(file))
      throw new DomainError('profile.not_a_file', 'conflict', `${rel} is not a regular file`, { profile: name });
    const current = existing.state === 'ok' ? existing.etag : null;
    if (typeof ifMatch === 'string' && ifMatch.trim() !== '*' && ifMatch.trim() !== current)
      throw new DomainError(
        'profile.stale',
        'precondition_failed',
        `${rel} changed since it was read (If-Match ${ifMatch.trim().slice(0, 60)}, now ${current ?? 'absent'}); read it again and reapply`,
        {
          profile: name,
          etag: current,
        },
      );
    if (ifMatch === null && current !== null)
      throw new DomainError(
        'profile.stale',
        'precondition_failed',
        `${rel} was created since it was read (now ${current}); read it again and reapply`,
        {
          profile: name,
          etag: current,
        },
      );
    if (ifMatch === '*' && current === null)
      throw new DomainError('profile.stale', 'precondition_failed', `${rel} does not exist`, { profile: name, etag: null });
    if (ifMatch === undefined && existing.state === 'ok') this.refuseBlindCut(name, home, segments, existing.size);
    const dir = segments.slice(0, -1);
    if (dir.length) {
      if (dirInside(home, dir) === 'absent') fs.mkdirSync(path.join(home, ...dir), { recursive: true, mode: 0o700 });
      if (dirInside(home, dir) !== 'dir' || fs.realpathSync(path.dirname(file)) !== path.join(fs.realpathSync(home), ...dir)) throw linked();
    }
    const written = atomicWrite(file, content);
    await this.loop.run(actor, () => [
      {
        type: 'profile.file_written' as const,
        data: { profile: name, file: rel, sha256: written.sha256, bytes: written.bytes, replaced: current !== null },
      },
    ]);
    return { bytes: written.bytes, etag: etagOfBytes(written.sha256) };
  }

  /**
   * A save without If-Match of a file the phone routes show only in part (profile-file-caps.ts) is refused:
   * it can only have started from the cut text (the app edits what it was served and sends no If-Match,
   * ProfileInspectorViewModel.kt:150-180), so it would drop the rest. 409, with a status-line phrase, since
   * for a 409 the app shows only `HTTP 409: <phrase>` (RelayProfileInspectorClient.kt:243). A writer that
   * names the version it read (If-Match) is trusted with it.
   */
  private refuseBlindCut(name: string, home: string, segments: string[], size: number): void {
    const shown = shownBytes(home, segments, this.caps);
    if (size <= shown) return;
    const rel = segments.join('/');
    throw new DomainError(
      'profile.shown_in_part',
      'conflict',
      `${rel} is ${size} bytes and phones are shown ${shown} of them; a save without If-Match would cut the rest. Edit it on the host or in the console, or send If-Match with its ETag`,
      {
        profile: name,
        wireError: 'profile_shown_in_part',
        size_bytes: size,
        shown_bytes: shown,
        reasonPhrase: `${rel} was shown in part (too large); edit it on the host`,
      },
    );
  }
}

/** `memories/` or `skills/` of a profile that is a symbolic link: refused, never followed (403 `profile.symlink`). */
function refuseLinkedDir(home: string, dir: string, name: string): void {
  if (dirInside(home, [dir]) === 'link')
    throw new DomainError('profile.symlink', 'forbidden', `${dir}/ is a symbolic link; the relay does not follow links out of a profile`, {
      profile: name,
    });
}

/** The public profile schema (the reference's): `description`, and `model.default`. Nothing else leaves the host. */
export function publicConfig(parsed: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (typeof parsed.description === 'string') out.description = parsed.description;
  const model = parsed.model;
  if (typeof model === 'object' && model !== null && typeof (model as { default?: unknown }).default === 'string')
    out.model = { default: (model as { default: string }).default };
  return out;
}

function frontMatterDescription(text: string): string {
  const m = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text);
  // eslint-disable-next-line regexp/no-super-linear-backtracking -- front matter of the host's own skill files, read 8 KiB at most
  const d = m ? /^description:\s*(.+)$/m.exec(m[1]) : null;
  return d
    ? d[1]
        .trim()
        .replace(/^["']|["']$/g, '')
        .slice(0, 500)
    : '';
}
