import * as os from 'node:os';
import * as fs from 'node:fs';
import type * as Pty from 'node-pty';

/** node-pty (its native binding and 95 KiB of JS) is loaded by the first shell, not at the relay's start. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const loadPty = (): typeof Pty => require('node-pty') as typeof Pty;
import type { TerminalCloseReason } from '@svc/events';
import type { PhoneConnection } from '../phone-socket/phone-connection';
import { reapSession } from './process-reaper';
import type { ShellRecorder } from './recording';
import { ReplayBuffer } from './replay-buffer';

/** Output is sent at once when the line is quiet, else at most every 16 ms or per 4 KiB. */
export const COALESCE_MS = 16;
export const COALESCE_BYTES = 4 * 1024;
/** Below this much output per window the line counts as interactive (echo): no waiting at all. */
export const INTERACTIVE_BYTES = 256;
/** Back-pressure on the phone socket: pause the pty above HIGH buffered bytes, resume below LOW. */
export const HIGH_WATER = 1024 * 1024;
export const LOW_WATER = 256 * 1024;
export const REPLAY_BYTES = 64 * 1024;
/** How long a hung-up shell gets before SIGKILL. */
export const HANGUP_GRACE_MS = 500;

/** Environment variables of the relay itself that a phone's shell must not inherit. */
const RELAY_ONLY_ENV = ['RELAY_PAIRING_CODE', 'RELAY_SECURE_LINK_BROKER_HOST_TOKEN', 'RELAY_TUI_COMMAND'];

export type ShellSpec = { shellId: string; sessionName: string; tokenPrefix: string; shell: string; cols: number; rows: number };
export type ShellExit = { reason: TerminalCloseReason; exitCode: number | null; signal: number | null };

/** The environment a phone's shell starts with: the relay's, with a sane TERM and a UTF-8 locale. */
export function shellEnv(base: NodeJS.ProcessEnv, sessionName: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined && !RELAY_ONLY_ENV.includes(k)) env[k] = v;
  env.TERM = 'xterm-256color';
  env.COLORTERM = 'truecolor';
  const locale = env.LC_ALL || env.LC_CTYPE || env.LANG || '';
  if (!/utf-?8/i.test(locale)) {
    delete env.LC_ALL;
    env.LANG = 'C.UTF-8';
  }
  env.SVC_RELAY_TERMINAL = sessionName;
  return env;
}

/**
 * One remote shell: a pty, its output coalesced to the attached phone socket (if any) under
 * back-pressure, and a bounded replay of its recent output for re-attach.
 */
export class ShellProcess {
  readonly pid: number;
  readonly exited: Promise<ShellExit>;
  cols: number;
  rows: number;
  conn: PhoneConnection | null = null;
  closeReason: TerminalCloseReason | null = null;
  /** The socket whose terminal.kill ended it (it gets the answer to its request, not a second notice). */
  killAskedBy: PhoneConnection | null = null;
  /** Who ended it when not the phone or the relay itself (`operator`): the actor of its `terminal.closed`. */
  endedBy: string | null = null;
  paused = false;
  /** Bytes sent to phones (metrics; never content). */
  bytesOut = 0;
  private readonly term: Pty.IPty;
  private readonly replay = new ReplayBuffer(REPLAY_BYTES);
  private pending = '';
  private pendingBytes = 0;
  private windowSent = 0;
  private windowTimer: NodeJS.Timeout | null = null;
  private drainTimer: NodeJS.Timeout | null = null;
  private reaping: Promise<void> | null = null;
  private gone = false;
  private lastOutputAt: number | null = null;

  /** `recorder`: the shell's recording (RELAY_TERMINAL_RECORDING), told of output, input and resizes as they happen. */
  constructor(
    readonly spec: ShellSpec,
    private readonly recorder: ShellRecorder | null = null,
  ) {
    this.cols = spec.cols;
    this.rows = spec.rows;
    const home = os.homedir();
    this.term = loadPty().spawn(spec.shell, [], {
      name: 'xterm-256color',
      cols: spec.cols,
      rows: spec.rows,
      cwd: enterable(home) ? home : '/',
      env: shellEnv(process.env, spec.sessionName),
      // node-pty decodes with a streaming decoder: a character split across reads is never mangled.
      encoding: 'utf8',
    });
    this.pid = this.term.pid;
    this.term.onData((text) => this.onData(text));
    this.exited = new Promise((resolve) => {
      this.term.onExit(({ exitCode, signal }) => {
        this.gone = true;
        this.flush();
        this.stopTimers();
        resolve({ reason: this.closeReason ?? 'exited', exitCode: signal ? null : exitCode, signal: signal || null });
      });
    });
  }

  get attached(): boolean {
    return this.conn !== null;
  }

  /** The recent output kept for a re-attach (at most REPLAY_BYTES). */
  replayText(): string {
    return this.replay.text();
  }

  /** Start streaming to `conn`, first repainting with the replay of recent output. */
  attach(conn: PhoneConnection, replay: boolean): void {
    this.flush();
    this.conn = conn;
    const text = this.replay.text();
    if (text.length > 0) this.sendOutput(text, Buffer.byteLength(text), replay);
  }

  /** Stop streaming; the shell keeps running and its output only feeds the replay buffer. */
  detach(): void {
    this.conn = null;
    this.pending = '';
    this.pendingBytes = 0;
    this.resumePty();
  }

  write(data: string): void {
    if (this.gone) return;
    this.recorder?.input(data);
    this.term.write(data);
  }

  resize(cols: number, rows: number): void {
    if (this.gone) return;
    this.cols = cols;
    this.rows = rows;
    this.term.resize(cols, rows);
    this.recorder?.resize(cols, rows);
  }

  /** Hang up the shell and everything in its session; `exited` resolves once the shell is gone. */
  kill(reason: TerminalCloseReason): Promise<ShellExit> {
    this.closeReason ??= reason;
    this.resumePty();
    this.reaping ??= reapSession(this.pid, { signal: 'SIGHUP', graceMs: HANGUP_GRACE_MS }).then(async () => {
      // The pty's own child is reaped by node-pty; make sure it really ends if it ignored everything.
      const done = await Promise.race([this.exited.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 2000).unref())]);
      if (!done) this.term.kill('SIGKILL');
    });
    return this.exited;
  }

  /**
   * Resolves once the new shell has printed something (its prompt) and then been quiet for `quietMs`, or
   * after `maxMs`: what it printed goes into the attach answer, where every client sees it.
   */
  settled(maxMs: number, quietMs: number): Promise<void> {
    const start = Date.now();
    return new Promise((resolve) => {
      const check = (): void => {
        const now = Date.now();
        if (this.gone || now - start >= maxMs || (this.lastOutputAt !== null && now - this.lastOutputAt >= quietMs)) return resolve();
        setTimeout(check, 5).unref();
      };
      check();
    });
  }

  private onData(text: string): void {
    this.lastOutputAt = Date.now();
    this.recorder?.output(text);
    const bytes = Buffer.byteLength(text);
    this.replay.push(text, bytes);
    if (!this.conn) return;
    this.pending += text;
    this.pendingBytes += bytes;
    if (this.windowTimer === null || this.pendingBytes >= COALESCE_BYTES || this.windowSent + this.pendingBytes < INTERACTIVE_BYTES) this.flush();
  }

  /** Sends what is pending and opens a 16 ms window in which further output is gathered. */
  private flush(): void {
    if (this.pendingBytes > 0 && this.conn) this.sendOutput(this.pending, this.pendingBytes, false);
    this.windowSent += this.pendingBytes;
    this.pending = '';
    this.pendingBytes = 0;
    if (this.windowTimer === null && !this.gone) {
      this.windowTimer = setTimeout(() => {
        this.windowTimer = null;
        this.windowSent = 0;
        if (this.pendingBytes > 0) this.flush();
      }, COALESCE_MS);
    }
  }

  private sendOutput(data: string, bytes: number, replay: boolean): void {
    const conn = this.conn;
    if (!conn) return;
    const payload: Record<string, unknown> = { session_name: this.spec.sessionName, data };
    if (replay) payload.replay = true;
    if (!conn.send('terminal', 'terminal.output', payload)) return;
    this.bytesOut += bytes;
    if (!this.paused && conn.ws.bufferedAmount > HIGH_WATER) this.pausePty(conn);
  }

  private pausePty(conn: PhoneConnection): void {
    if (this.gone) return;
    this.paused = true;
    this.term.pause();
    const check = (): void => {
      this.drainTimer = null;
      if (!this.paused) return;
      if (this.conn !== conn || conn.closed || conn.ws.bufferedAmount < LOW_WATER) return this.resumePty();
      this.drainTimer = setTimeout(check, 10);
    };
    this.drainTimer = setTimeout(check, 10);
  }

  private resumePty(): void {
    if (this.drainTimer) clearTimeout(this.drainTimer);
    this.drainTimer = null;
    if (!this.paused) return;
    this.paused = false;
    if (!this.gone) this.term.resume();
  }

  private stopTimers(): void {
    if (this.windowTimer) clearTimeout(this.windowTimer);
    if (this.drainTimer) clearTimeout(this.drainTimer);
    this.windowTimer = null;
    this.drainTimer = null;
  }
}

/**
 * A home the relay's user may not enter (a service started with another user's HOME, as `sudo -u` keeps it;
 * one ProtectHome= hides) would make the pty's chdir fail and the shell never start: `/` instead.
 */
function enterable(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.X_OK);
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}
