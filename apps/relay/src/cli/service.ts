import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { atomicWrite } from '../common/atomic-write';
import { packageRoot, relayVersion } from '../common/config/version';
import { CliError, EXIT, line, parseFlags, UsageError, type CliIo } from './io';
import { protectHome, serviceUnit, unitPathProblem, type UnitTarget } from './service-unit';

export const DEFAULT_UNIT_PATH = '/etc/systemd/system/svc-relay.service';

const TARGET_FLAGS = {
  user: { type: 'string' },
  home: { type: 'string' },
  writable: { type: 'string', multiple: true },
} as const;

type Account = { name: string; uid: number; gid: number; home: string };

/** A user from the passwd database (getent, so LDAP and the like count), or a plain error. */
function account(name: string): Account {
  let entry: string;
  try {
    entry = execFileSync('getent', ['passwd', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    throw new CliError(
      `there is no user "${name}" on this machine; make one for the relay (useradd --system --create-home --home-dir /var/lib/svc-relay svc-relay) or pass --user NAME`,
    );
  }
  const [user, , uid, gid, , home] = entry.split('\n')[0].split(':');
  return { name: user, uid: Number(uid), gid: Number(gid), home };
}

/**
 * Who the unit runs as and where: `--user`, else the one sudo was run by, else whoever runs this; `--home`,
 * else SVC_HOME, else that user's ~/.svc (sudo usually drops SVC_HOME: the target user's home is the guess).
 */
function unitTarget(
  command: string,
  v: { user?: string; home?: string; writable?: string[] },
  env: NodeJS.ProcessEnv,
): { target: UnitTarget; who: Account; notes: string[] } {
  const notes: string[] = [];
  const asRoot = process.getuid?.() === 0;
  const name = v.user ?? (asRoot && env.SUDO_USER ? env.SUDO_USER : os.userInfo().username);
  const who = account(name);
  if (who.uid === 0) {
    if (v.user === undefined)
      throw new CliError(
        'the relay would run as root: pass --user NAME, a user of its own (useradd --system --create-home --home-dir /var/lib/svc-relay svc-relay)',
      );
    notes.push('the relay runs as root: with no capabilities, but every file root owns is its own; a user of its own is safer');
  }
  const home = path.resolve(v.home ?? env.SVC_HOME ?? path.join(who.home, '.svc'));
  const writable = (v.writable ?? []).flatMap((w) => w.split(':')).filter(Boolean);
  const root = packageRoot();
  if (!root) throw new CliError('cannot find this install (no package.json above the CLI)');
  const target: UnitTarget = {
    node: process.execPath,
    svc: path.join(root, 'bin', 'svc'),
    user: who.name,
    userHome: who.home,
    home,
    writable,
    version: relayVersion(),
  };
  for (const [what, p] of [
    ['--home', home],
    ['--writable', ...writable],
    ['node', target.node],
    ['svc', target.svc],
  ].flatMap(([w, ...ps]) => ps.map((p) => [w, p]))) {
    const problem = unitPathProblem(p);
    if (problem) throw new UsageError(`${what} ${p}: ${problem}`, command);
  }
  if (!fs.existsSync(home))
    notes.push(`${home} does not exist yet: "svc relay service install" makes it (0700, owned by ${who.name}), or make it so yourself`);
  if (protectHome(target) === 'read-only')
    notes.push(
      `ProtectHome=read-only: the home, the user's home, node or svc lies under /home, /root or /run/user; the relay and its shells write only ${[home, ...writable].join(', ')}`,
    );
  return { target, who, notes };
}

/** `svc relay service print [--user NAME] [--home DIR] [--writable PATH]...`: the unit on stdout, notes on stderr. */
export function servicePrintCommand(args: string[], io: CliIo): number {
  const v = parseFlags('relay service print', args, TARGET_FLAGS);
  const { target, notes } = unitTarget('relay service print', v, io.env);
  io.stdout.write(serviceUnit(target));
  for (const n of notes) line(io.stderr, `note: ${n}`);
  return EXIT.ok;
}

/**
 * `svc relay service install [--path FILE] [--force] [--dry-run] [--user ...]`: writes the unit (0644), makes
 * the home if it is missing, and prints the two systemctl commands; never replaces a unit without --force.
 */
export function serviceInstallCommand(args: string[], io: CliIo): number {
  const command = 'relay service install';
  const v = parseFlags(command, args, { ...TARGET_FLAGS, path: { type: 'string' }, force: { type: 'boolean' }, 'dry-run': { type: 'boolean' } });
  const file = path.resolve(v.path ?? DEFAULT_UNIT_PATH);
  if (!file.endsWith('.service')) throw new UsageError(`--path ${v.path}: a unit file's name ends in .service`, command);
  if (v.path === undefined && process.getuid?.() !== 0)
    throw new CliError(`writing ${file} needs root: run it with sudo (the unit then runs as the user who ran sudo, or --user NAME)`);
  const { target, who, notes } = unitTarget(command, v, io.env);
  const exists = fs.existsSync(file);
  if (exists && !v.force) throw new CliError(`${file} exists; compare it with "svc relay service print", then run again with --force to replace it`);
  if (!fs.existsSync(path.dirname(file))) throw new CliError(`${path.dirname(file)} does not exist: is systemd installed here?`);
  const unit = path.basename(file);
  if (v['dry-run']) {
    line(
      io.stdout,
      `would write ${file}${exists ? ' (replacing the one there)' : ''}${fs.existsSync(target.home) ? '' : ` and make ${target.home}`}; nothing written`,
    );
  } else {
    if (!fs.existsSync(target.home)) makeHome(target.home, who);
    atomicWrite(file, serviceUnit(target), { mode: 0o644 });
    line(io.stdout, `wrote ${file}${exists ? ' (replaced)' : ''}: svc relay as ${who.name}, SVC_HOME=${target.home}`);
  }
  for (const n of notes) line(io.stderr, `note: ${n}`);
  line(io.stdout, 'Enable and start it:');
  line(io.stdout, '  systemctl daemon-reload');
  line(io.stdout, `  systemctl enable --now ${unit}`);
  return EXIT.ok;
}

/** The home must exist before the first start: ProtectSystem=strict lets the relay write only inside it. */
function makeHome(home: string, who: Account): void {
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  if (process.getuid?.() === 0) fs.chownSync(home, who.uid, who.gid);
}
