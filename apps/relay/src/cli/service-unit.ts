import * as path from 'node:path';
import { SHUTDOWN_DRAIN_MS } from '../common/shutdown';

/** What the unit is made for: this install (node and bin/svc), a user, and the relay's home. */
export type UnitTarget = {
  /** The node binary that runs the CLI now (process.execPath): `#!/usr/bin/env node` would find another, or none, on systemd's PATH. */
  node: string;
  /** This install's bin/svc. */
  svc: string;
  user: string;
  /** The user's login home, from the passwd database: where a phone's shell starts. */
  userHome: string;
  /** SVC_HOME: the one tree the relay writes. */
  home: string;
  /** More paths the relay and the shells it starts may write (`--writable`). */
  writable: readonly string[];
  version: string;
};

/** Where ProtectHome= reaches: homes there need it read-only (with the writable paths let through), not hidden. */
const HOME_TREES = ['/home', '/root', '/run/user'];

/**
 * Beyond the relay's own drain at a stop (requests in flight, then the log's last fsync, shells SIGHUP then
 * SIGKILL, the TUI gateway's 2 s): ten times the drain, so a loaded machine's stop is never cut into a SIGKILL.
 */
export const TIMEOUT_STOP_SECONDS = Math.ceil(SHUTDOWN_DRAIN_MS / 1000) * 10;

const under = (p: string, root: string) => p === root || p.startsWith(root + '/');

/**
 * `yes` hides /home, /root and /run/user; `read-only` when anything the relay needs is in them: the home, the
 * user's home, a writable path, or node and svc themselves (a Node installed by nvm lives in a home).
 */
export function protectHome(t: Pick<UnitTarget, 'home' | 'userHome' | 'writable' | 'node' | 'svc'>): 'yes' | 'read-only' {
  return [t.home, t.userHome, ...t.writable, t.node, t.svc].some((p) => HOME_TREES.some((root) => under(p, root))) ? 'read-only' : 'yes';
}

/** A path a unit may name: absolute, and no character systemd's parser or a specifier would take for syntax. */
export function unitPathProblem(p: string): string | null {
  if (!path.isAbsolute(p)) return 'not an absolute path';
  if (/[\u0000-\u001f\u007f"'\\]/.test(p)) return 'holds a quote, a backslash or a control character, which a unit file cannot carry as is';
  return null;
}

/** One word of a unit line: `%` is a specifier and `$` a variable to systemd, whitespace splits; quoted when needed. */
function word(s: string): string {
  const escaped = s.replace(/%/g, '%%').replace(/\$/g, '$$$$');
  return /\s/.test(escaped) ? `"${escaped}"` : escaped;
}

/**
 * The unit, hardened as far as the relay still works: node-pty shells (a new devpts under PrivateDevices),
 * espeak-ng, lame, pocketsphinx and ffmpeg (read-only binaries, a private /tmp), the PostgreSQL client (TCP
 * or a Unix socket). Each line that gives something up says why. `systemd-analyze security` rates it; the
 * figure and what a phone's shell cannot do under it are in docs/OPERATING.md, "Running as a service".
 */
export function serviceUnit(t: UnitTarget): string {
  const writable = [...new Set([t.home, ...t.writable])];
  return `# svc relay ${t.version}, made by "svc relay service print" for ${t.user} with SVC_HOME=${t.home}.
# Print it again after moving the install, the home or Node. What each setting keeps a phone's shell from:
# docs/OPERATING.md, "Running as a service".
[Unit]
Description=svc relay (paired phones to the agent host)
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
User=${word(t.user)}
Environment=${word(`SVC_HOME=${t.home}`)}
ExecStart=${word(t.node)} ${word(t.svc)} relay start
Restart=on-failure
RestartSec=5
# SIGTERM to the relay alone: it ends its shells and TUI gateways itself, then SIGKILL takes what is left.
KillMode=mixed
TimeoutStopSec=${TIMEOUT_STOP_SECONDS}
UMask=0077

# Everything is read-only but the home (and --writable paths); /tmp is the relay's own.
ProtectSystem=strict
${writable.map((p) => `ReadWritePaths=${word(p)}`).join('\n')}
# read-only, not hidden, when a home, a writable path, node or svc lies under /home, /root or /run/user.
ProtectHome=${protectHome(t)}
PrivateTmp=yes
# /dev holds null, zero, random, the tty and a new devpts: node-pty's shells still get their ptys.
PrivateDevices=yes
PrivateMounts=yes
PrivateIPC=yes
PrivateUsers=yes

NoNewPrivileges=yes
CapabilityBoundingSet=
AmbientCapabilities=
RestrictSUIDSGID=yes
# AF_NETLINK: Node lists the machine's addresses through it (the pairing QR's LAN address).
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK
RestrictNamespaces=yes
RestrictRealtime=yes
LockPersonality=yes
SystemCallArchitectures=native
SystemCallFilter=@system-service
SystemCallFilter=~@privileged @resources
SystemCallErrorNumber=EPERM
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
ProtectProc=invisible
${
  protectHome(t) === 'yes'
    ? 'RemoveIPC=yes'
    : "# RemoveIPC= off: at a stop it would remove every System V and POSIX IPC object of the user's, their desktop's too."
}
# Not set, on purpose:
#  MemoryDenyWriteExecute=yes  V8, Node's JavaScript engine, compiles to memory it writes and then runs: Node does not start.
#  ProcSubset=pid              hides /proc/meminfo, /proc/stat, /proc/loadavg: free, top and uptime fail in a phone's shell.
#  PrivateNetwork=, IPAddressDeny=  phones reach the relay from any address.

[Install]
WantedBy=multi-user.target
`;
}
