import type { Readable } from 'node:stream';
import { printable } from './frames';
import type { FlowsOut, PhoneFlows } from './phone-flows';
import type { PhoneSim } from './phone-sim';
import { dictate, speak } from './phone-voice';

/*
 * `svc phone-sim --interactive`: a small prompt that plays the phone's user, one command a line, so an operator can
 * make each console page come alive without a phone. Lines are read from any stream (a terminal or a pipe), at most
 * MAX_LINE characters each and MAX_PENDING waiting, so no input can make the simulator buffer without bound.
 */

/** The longest line taken (characters); a longer one is refused whole, up to its newline, and never kept. */
export const MAX_LINE = 64 * 1024;
/** Lines waiting while a command runs; past it the input is paused until they are done. */
const MAX_PENDING = 64;

export const HELP = `commands:
  notify TITLE | TEXT     post a notification from the phone (Threads page, notifications)
  threads [on|off]        receive Threads messages (on: subscribe; they print as they arrive)
  reply TEXT              answer the newest Threads message
  shell [COLSxROWS]       open a terminal tab; lines go to the shell; ~. detaches, ~k kills, ~r COLSxROWS resizes
  clip TEXT | clip get    copy TEXT on the phone (the host reads it with GET /clipboard) | show the phone's clipboard
  say TEXT                have the relay speak TEXT (/voice/synthesize)
  hear FILE               have the relay transcribe an audio file (/voice/transcribe)
  master on|off           flip Device Control on the phone
  status                  what the phone is doing
  quit                    disconnect and exit (end of input does the same)`;

export type Interactive = { sim: PhoneSim; flows: PhoneFlows; out: FlowsOut; input: Readable; prompt: boolean };

/** Runs the prompt until `quit`, the end of the input, or the relay closing the socket; resolves with the exit code. */
export function runInteractive(ctx: Interactive): Promise<number> {
  const { input } = ctx;
  const pending: string[] = [];
  let buf = '';
  let skipping = false;
  let ended = false;
  let busy = false;
  let finish!: (code: number) => void;
  const done = new Promise<number>((r) => (finish = r));
  const session = new Session(ctx, () => finish(0));

  const pump = async (): Promise<void> => {
    if (busy) return;
    busy = true;
    while (pending.length > 0) {
      await session.run(pending.shift()!);
      if (session.quit) break;
    }
    busy = false;
    if (input.isPaused() && pending.length < MAX_PENDING / 2) input.resume();
    if (ended && pending.length === 0 && !session.quit) session.end();
    else if (!session.quit) session.showPrompt();
  };
  const push = (line: string) => {
    pending.push(line.endsWith('\r') ? line.slice(0, -1) : line);
    if (pending.length >= MAX_PENDING) input.pause();
  };
  const onData = (chunk: Buffer | string) => {
    const s = chunk.toString();
    let from = 0;
    for (let nl = s.indexOf('\n'); nl !== -1; nl = s.indexOf('\n', from)) {
      if (skipping) skipping = false;
      else push(buf + s.slice(from, nl));
      buf = '';
      from = nl + 1;
    }
    if (!skipping) buf += s.slice(from);
    if (buf.length > MAX_LINE) {
      buf = '';
      skipping = true;
      ctx.out.line(`line longer than ${MAX_LINE} characters: ignored up to its end`);
    }
    void pump();
  };
  input.setEncoding('utf8');
  input.on('data', onData);
  input.once('end', () => {
    ended = true;
    if (buf && !skipping) push(buf);
    buf = '';
    void pump();
  });
  void ctx.sim.closed.then((code) => finish(code === 1000 || code === 1005 ? 0 : 1));
  session.showPrompt();
  return done.finally(() => {
    input.off('data', onData);
    input.pause();
  });
}

/** One user at the phone: what a line means depends on whether a shell is open. */
class Session {
  quit = false;

  constructor(
    private readonly ctx: Interactive,
    private readonly onQuit: () => void,
  ) {}

  showPrompt(): void {
    if (this.ctx.prompt && !this.ctx.flows.shell) this.ctx.out.raw('sim> ');
  }

  end(): void {
    this.quit = true;
    this.ctx.sim.stop();
    this.onQuit();
  }

  async run(line: string): Promise<void> {
    try {
      if (this.ctx.flows.shell) return await this.shellLine(line);
      await this.command(line.trim());
    } catch (err) {
      this.say(`failed: ${(err as Error).message}`);
    }
  }

  private say(text: string): void {
    this.ctx.out.line(printable(text, 2000));
  }

  private async shellLine(line: string): Promise<void> {
    const { flows } = this.ctx;
    if (line === '~.' || line === '~k') {
      const reason = await flows.leave(line === '~.' ? 'detach' : 'kill');
      flows.shell = null;
      return this.say(`left the shell (${reason})`);
    }
    if (line.startsWith('~r ')) {
      const size = parseSize(line.slice(3).trim());
      if (!size) return this.say('~r takes COLSxROWS, e.g. ~r 100x30');
      return flows.resize(size.cols, size.rows);
    }
    // The app's keyboard sends Enter as a carriage return, as a terminal does.
    flows.input(`${line}\r`);
  }

  private async command(line: string): Promise<void> {
    if (!line || line.startsWith('#')) return;
    const sp = line.indexOf(' ');
    const verb = (sp === -1 ? line : line.slice(0, sp)).toLowerCase();
    const rest = sp === -1 ? '' : line.slice(sp + 1).trim();
    const { sim, flows } = this.ctx;
    switch (verb) {
      case 'help':
      case '?':
        return this.ctx.out.line(HELP);
      case 'quit':
      case 'exit':
        return this.end();
      case 'status':
        return this.status();
      case 'notify': {
        const bar = rest.indexOf('|');
        const [title, text] = bar === -1 ? [null, rest] : [rest.slice(0, bar), rest.slice(bar + 1)];
        flows.notify(title, text);
        return this.say('notification posted');
      }
      case 'threads':
        if (rest === 'off') return flows.unsubscribe();
        if (rest && rest !== 'on') return this.say('threads takes on or off');
        await flows.subscribe();
        return;
      case 'reply': {
        const { replyId } = await flows.reply(rest);
        return this.say(`reply received by the relay (${replyId})`);
      }
      case 'shell': {
        const size = rest ? parseSize(rest) : { cols: 80, rows: 24 };
        if (!size) return this.say('shell takes COLSxROWS, e.g. shell 100x30');
        const { pid, shell } = await flows.attach(size.cols, size.rows);
        this.say(`shell ${shell ?? '?'} (pid ${pid ?? '?'}) attached: type lines for it; ~. detaches, ~k kills it`);
        void flows.detached().then(
          () => this.showPrompt(),
          () => undefined,
        );
        return;
      }
      case 'clip':
        if (rest === 'get' || !rest) return this.say(`phone clipboard: ${flows.clipboard() || '(empty)'}`);
        flows.copy(rest);
        return this.say(`copied ${rest.length} characters on the phone`);
      case 'say': {
        const r = await speak(sim.opts.relayUrl, sim.token!, rest);
        return this.say(r.ok ? `the relay spoke ${r.bytes.length} bytes of ${r.type}` : `voice refused: ${r.error}`);
      }
      case 'hear': {
        const r = await dictate(sim.opts.relayUrl, sim.token!, rest);
        return this.say(r.ok ? `the relay heard: ${r.text}` : `voice refused: ${r.error}`);
      }
      case 'master':
        if (rest !== 'on' && rest !== 'off') return this.say('master takes on or off');
        sim.reportStatus({ masterEnabled: rest === 'on' });
        return this.say(`Device Control ${rest}`);
      default:
        return this.say(`unknown command "${verb.slice(0, 40)}"; type help for the list`);
    }
  }

  private status(): void {
    const { sim, flows } = this.ctx;
    const latest = flows.messages[flows.messages.length - 1];
    for (const line of [
      `paired as ${sim.tokenPrefix}… (device ${sim.deviceId}, ${sim.mode} mode)`,
      `grants: ${Object.keys(sim.grants).join(', ') || 'none'}`,
      `Device Control ${sim.state.masterEnabled ? 'on' : 'off'}, foreground ${sim.state.currentApp}`,
      `threads: ${flows.subscribed ? 'subscribed' : 'not subscribed'}, ${flows.messages.length} message(s)${latest ? `, newest in ${latest.chatId ?? '?'}` : ''}`,
      `shell: ${flows.shell ? `${flows.shell.sessionName} (pid ${flows.shell.pid ?? '?'})` : 'none'}`,
      `clipboard: ${flows.clipboard().length} characters`,
    ])
      this.say(line);
  }
}

/** `COLSxROWS` with each in 1-1000, or null. */
export function parseSize(s: string): { cols: number; rows: number } | null {
  const x = s.toLowerCase().indexOf('x');
  if (x === -1 || s.length > 11) return null;
  const cols = Number(s.slice(0, x));
  const rows = Number(s.slice(x + 1));
  const ok = (n: number) => Number.isInteger(n) && n >= 1 && n <= 1000;
  return ok(cols) && ok(rows) ? { cols, rows } : null;
}
