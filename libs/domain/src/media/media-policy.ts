/**
 * Which host files a phone may read (spec 4.4, issue 4). A pure function of an already resolved real
 * path (symlinks followed, `..` gone) and the host's facts, so the same answer comes out at check time
 * and again for the path of the descriptor actually opened. POSIX paths.
 */
export type MediaPolicyContext = {
  /** The relay user's home directory (real path). */
  home: string;
  /** `<svc_home>` (real path): its secrets, event log and env file are never served... */
  svcHome: string;
  /** ...except the workspace (`SVC_WORKSPACE`), which may sit inside it. */
  workspace: string;
  /** The system temp directory (real path). */
  tmpDir: string;
  /** `RELAY_MEDIA_ALLOWED_ROOTS` (real paths). */
  allowedRoots: readonly string[];
  /** `RELAY_MEDIA_STRICT_SANDBOX=1`: only files under tmp, workspace and the allowed roots. */
  strictSandbox: boolean;
};

export type PolicyVerdict = { ok: true } | { ok: false; code: 'media.denied_path' | 'media.outside_sandbox' | 'media.bad_path'; reason: string };

/** System trees never served, whatever the sandbox says. `/var/run` resolves to `/run` on most hosts. */
export const DENIED_SYSTEM_ROOTS: readonly string[] = [
  '/etc',
  '/proc',
  '/sys',
  '/dev',
  '/boot',
  '/var/log',
  '/var/lib',
  '/var/run',
  '/run',
  '/private/etc',
  '/private/var/log',
  '/private/var/run',
  '/private/var/db',
];

/** Credential folders and files in a home directory. */
export const CREDENTIAL_DIRS: readonly string[] = ['.ssh', '.aws', '.gnupg', '.kube', '.docker', '.config', '.azure', '.gcloud'];
export const CREDENTIAL_FILES: readonly string[] = ['.netrc', '.git-credentials', '.pgpass', '.npmrc', '.pypirc'];

/** True when `p` is `root` or inside it (both real, absolute, without a trailing slash except `/`). */
export function isWithin(p: string, root: string): boolean {
  if (root === '/') return p.startsWith('/');
  return p === root || p.startsWith(root + '/');
}

/** Home directories on the host: the relay user's, `/root`, and `/home/<user>` or `/Users/<user>`. */
function homeOf(p: string, home: string): string | null {
  if (home !== '/' && isWithin(p, home)) return home;
  const m = /^(\/root|\/home\/[^/]+|\/Users\/[^/]+)(?:\/|$)/.exec(p);
  return m ? m[1] : null;
}

export function checkMediaPath(realPath: string, ctx: MediaPolicyContext): PolicyVerdict {
  if (typeof realPath !== 'string' || !realPath.startsWith('/') || realPath.includes('\0')) {
    return { ok: false, code: 'media.bad_path', reason: 'path must be an absolute path' };
  }
  for (const root of DENIED_SYSTEM_ROOTS) {
    if (isWithin(realPath, root)) return deny(`${root} is a system path and is never served`);
  }
  if (isWithin(realPath, '/root') && ctx.home !== '/root') return deny("/root is another user's home and is never served");
  const home = homeOf(realPath, ctx.home);
  if (home !== null) {
    const rest = realPath.slice(home.length + 1);
    const first = rest.split('/')[0];
    // Named as ~/x: the real path may be a symlink's target, which a phone should not learn.
    if (CREDENTIAL_DIRS.includes(first) || CREDENTIAL_FILES.includes(first)) return deny(`~/${first} holds credentials and is never served`);
  }
  if (isWithin(realPath, ctx.svcHome) && !isWithin(realPath, ctx.workspace)) {
    return deny("the relay's home (secrets, event log, config) is never served; only its workspace is");
  }
  if (ctx.strictSandbox) {
    const roots = [ctx.tmpDir, ctx.workspace, ...ctx.allowedRoots];
    if (!roots.some((r) => isWithin(realPath, r))) {
      return {
        ok: false,
        code: 'media.outside_sandbox',
        reason:
          'RELAY_MEDIA_STRICT_SANDBOX is on: only files under the temp directory, the workspace (SVC_WORKSPACE) or RELAY_MEDIA_ALLOWED_ROOTS are served',
      };
    }
  }
  return { ok: true };
}

function deny(reason: string): PolicyVerdict {
  return { ok: false, code: 'media.denied_path', reason };
}
