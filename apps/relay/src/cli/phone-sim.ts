import * as fs from 'node:fs';
import type { Readable } from 'node:stream';
import { envNumber, PORT } from '../common/config/config-env';
import { DEFAULT_PORT } from '../common/config/hosts';
import { runInteractive } from '../../../phone-sim/src/interactive';
import { PhoneFlows, DEFAULT_NOTIFY_APP, type FlowsOut } from '../../../phone-sim/src/phone-flows';
import { PhoneSim, type ConfirmPolicy } from '../../../phone-sim/src/phone-sim';
import { spokenPcm, voiceCall, wavFilePcm } from '../../../phone-sim/src/phone-call';
import { catalogLines, inspectProfile, saveSoul } from '../../../phone-sim/src/phone-profiles';
import { dictate, speak } from '../../../phone-sim/src/phone-voice';
import { PHONE_SIM_USAGE } from './phone-sim-usage';

const VALUED = new Set([
  'relay',
  'code',
  'token',
  'mode',
  'confirm',
  'name',
  'device-id',
  'master',
  'current-app',
  'trust',
  'auto-disable',
  'screen',
  'ui',
  'save-token',
  'reply-to-handover',
]);
const FLOWS = new Set([
  'notify',
  'notify-app',
  'clip',
  'reply',
  'chat',
  'reply-to',
  'say',
  'audio-out',
  'hear',
  'call',
  'call-wav',
  'profile',
  'soul',
  'shell',
]);
const REPEATABLE = new Set(['notify', 'shell']);
const SWITCHES = new Set(['no-device-control', 'quiet', 'threads', 'stay', 'interactive', 'profiles']);

/** Where the simulator writes besides its lines, and what it reads in interactive mode (the process's own by default). */
export type PhoneSimStreams = { raw(text: string): void; backlog(): number; stdin: Readable & { isTTY?: boolean } };

const processStreams = (): PhoneSimStreams => ({
  raw: (t) => process.stdout.write(t),
  backlog: () => process.stdout.writableLength,
  stdin: process.stdin,
});

type Parsed = { values: Map<string, string[]>; switches: Set<string> };

/** `--flag value`, `--flag=value` and the switches; the next word is a flag's value even when it starts with '-' (a token may). */
function parse(argv: string[]): Parsed | string {
  const values = new Map<string, string[]>();
  const switches = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-i') {
      switches.add('interactive');
      continue;
    }
    if (!a.startsWith('--')) return `unexpected argument "${a}"`;
    const eq = a.indexOf('=');
    const name = a.slice(2, eq === -1 ? undefined : eq);
    if (SWITCHES.has(name) && eq === -1) {
      switches.add(name);
      continue;
    }
    if (!VALUED.has(name) && !FLOWS.has(name)) return `unknown option "--${name.slice(0, 40)}"`;
    const value = eq === -1 ? argv[++i] : a.slice(eq + 1);
    if (value === undefined) return `--${name} needs a value`;
    if (values.has(name) && !REPEATABLE.has(name)) return `--${name} given twice`;
    values.set(name, [...(values.get(name) ?? []), value]);
  }
  return { values, switches };
}

/** `svc phone-sim …`: runs its flows, then until the socket closes or the process is interrupted. Returns an exit code. */
export async function runPhoneSim(
  argv: string[],
  out: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
  streams: PhoneSimStreams = processStreams(),
): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    out(PHONE_SIM_USAGE);
    return 0;
  }
  const parsed = parse(argv);
  const usage = (why: string) => {
    out(`phone-sim: ${why}\n${PHONE_SIM_USAGE}`);
    return 2;
  };
  if (typeof parsed === 'string') return usage(parsed);
  const flag = (n: string) => parsed.values.get(n)?.[0];
  const has = (n: string) => parsed.switches.has(n);
  let relay = flag('relay');
  try {
    relay ??= `ws://127.0.0.1:${envNumber(process.env, 'RELAY_PORT', { ...PORT, default: DEFAULT_PORT.relay })}`;
  } catch (err) {
    out(`phone-sim: ${(err as Error).message}`);
    return 2;
  }
  const confirm = (flag('confirm') ?? 'allow') as ConfirmPolicy;
  if (!['allow', 'deny', 'ignore'].includes(confirm)) return usage('--confirm must be allow, deny or ignore');
  const mode = flag('mode') ?? 'legacy';
  if (mode !== 'legacy' && mode !== 'app') return usage('--mode must be legacy or app');
  if (!flag('code') && !flag('token')) return usage('give --code (first pairing) or --token (reconnect)');
  const autoDisable = parsed.values.has('auto-disable') ? Number(flag('auto-disable')) : null;
  if (autoDisable !== null && (!Number.isFinite(autoDisable) || autoDisable < 0))
    return usage('--auto-disable must be a number of minutes (0: never)');
  // --screen 1440x3120: full-size screenshots at that size (issue 40), as a real phone's.
  const screen = flag('screen') === undefined ? null : /^([1-9]\d{0,3})x([1-9]\d{0,3})$/.exec(flag('screen')!);
  if (flag('screen') !== undefined && !screen) return usage('--screen must be WIDTHxHEIGHT in pixels, e.g. 1440x3120');
  // --ui apps: screens taps and typing change, for agents' element tools (issue 40, item 2).
  const ui = flag('ui') ?? 'fixed';
  if (ui !== 'fixed' && ui !== 'apps') return usage('--ui must be fixed or apps');
  for (const n of parsed.values.get('notify') ?? [])
    if (!n.replace('|', '').trim()) return usage('--notify needs "TITLE|TEXT" (either may be empty, not both)');
  if ((flag('chat') || flag('reply-to')) && !flag('reply')) return usage('--chat and --reply-to go with --reply');
  if (flag('audio-out') && !flag('say')) return usage('--audio-out goes with --say');
  if (flag('call') && flag('call-wav')) return usage('--call and --call-wav: one call at a time');
  if (flag('soul') !== undefined && !flag('profile')) return usage('--soul goes with --profile');

  // Shell output need not end its line; the simulator's next line then starts on a fresh one.
  let midLine = false;
  const raw = (text: string) => {
    if (text) midLine = !text.endsWith('\n');
    streams.raw(text);
  };
  const say = (line: string) => {
    if (midLine) streams.raw('\n');
    midLine = false;
    out(`[phone-sim] ${line}`);
  };
  const sim = new PhoneSim({
    relayUrl: relay,
    mode,
    code: flag('code'),
    token: flag('token'),
    confirm,
    deviceName: flag('name') ?? 'Phone simulator',
    deviceId: flag('device-id'),
    masterEnabled: (flag('master') ?? 'on') !== 'off',
    deviceControlSupported: !has('no-device-control'),
    currentApp: flag('current-app'),
    trustedVerbs: flag('trust')
      ?.split(',')
      .map((v) => v.trim())
      .filter(Boolean),
    autoDisableMinutes: autoDisable,
    ...(screen ? { screen: { width: Number(screen[1]), height: Number(screen[2]) } } : {}),
    ui,
    log: has('quiet') ? undefined : (line) => say(line),
  });
  const flowsOut: FlowsOut = { line: say, raw, backlog: streams.backlog };
  const flows = new PhoneFlows(sim, flowsOut);
  try {
    await sim.start();
  } catch (err) {
    out(`phone-sim: ${(err as Error).message}`);
    sim.stop();
    return 1;
  }
  // The token is a secret: never printed, only written (0600) where the operator asked.
  const save = flag('save-token');
  if (save && sim.token) fs.writeFileSync(save, `${sim.token}\n`, { mode: 0o600 });
  const stop = () => sim.stop();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    const failed = await runFlows(parsed, sim, flows, flowsOut);
    if (has('interactive')) {
      const code = await runInteractive({ sim, flows, out: flowsOut, input: streams.stdin, prompt: streams.stdin.isTTY === true });
      if (streams.stdin === process.stdin) process.stdin.destroy();
      return failed ? 1 : code;
    }
    const oneShot = has('profiles') || [...parsed.values.keys()].some((k) => FLOWS.has(k));
    if (oneShot && !has('stay') && !has('threads') && !flag('reply-to-handover')) {
      sim.stop();
      await sim.closed;
      return failed ? 1 : 0;
    }
    const code = await sim.closed;
    return failed || !(code === 1000 || code === 1005) ? 1 : 0;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

/** The flags' flows, once each in the usage's order; true when one failed (each says why). */
async function runFlows(p: Parsed, sim: PhoneSim, flows: PhoneFlows, out: FlowsOut): Promise<boolean> {
  const v = (n: string) => p.values.get(n)?.[0];
  let failed = false;
  const step = async (what: string, fn: () => Promise<string | void> | string | void) => {
    try {
      const said = await fn();
      if (said) out.line(said);
    } catch (err) {
      failed = true;
      out.line(`${what} failed: ${(err as Error).message}`);
    }
  };
  for (const n of p.values.get('notify') ?? []) {
    const bar = n.indexOf('|');
    await step('notify', () => {
      flows.notify(bar === -1 ? null : n.slice(0, bar), bar === -1 ? n : n.slice(bar + 1), v('notify-app') ?? DEFAULT_NOTIFY_APP);
      return 'notification posted';
    });
  }
  const clip = v('clip');
  if (clip !== undefined) await step('clip', () => (flows.copy(clip), `copied ${clip.length} characters on the phone`));
  const reply = v('reply');
  const handOver = v('reply-to-handover');
  if (handOver !== undefined) flows.handOverReply = handOver;
  if (p.switches.has('threads') || handOver !== undefined || (reply !== undefined && !v('chat')))
    await step('threads', () => flows.subscribe().then(() => undefined));
  if (reply !== undefined) {
    const to = v('chat') ? { chatId: v('chat')!, replyTo: v('reply-to') ?? null } : flows.latest();
    await step('reply', async () => `reply received by the relay (${(await flows.reply(reply, to)).replyId})`);
  }
  const say = v('say');
  if (say !== undefined)
    await step('say', async () => {
      const r = await speak(sim.opts.relayUrl, sim.token!, say);
      if (!r.ok) throw new Error(r.error);
      const file = v('audio-out');
      if (file) fs.writeFileSync(file, r.bytes);
      return `the relay spoke ${r.bytes.length} bytes of ${r.type}${file ? ` (saved to ${file})` : ''}`;
    });
  const hear = v('hear');
  if (hear !== undefined)
    await step('hear', async () => {
      const r = await dictate(sim.opts.relayUrl, sim.token!, hear);
      if (!r.ok) throw new Error(r.error);
      return `the relay heard: ${r.text}`;
    });
  const callText = v('call');
  const callWav = v('call-wav');
  if (callText !== undefined || callWav !== undefined)
    await step('call', async () => {
      const audio = callWav !== undefined ? wavFilePcm(callWav) : await spokenPcm(callText!);
      if ('error' in audio) throw new Error(audio.error);
      const r = await voiceCall(sim.opts.relayUrl, sim.token!, audio.pcm, out.line);
      if (!r.ok) throw new Error(r.error ?? 'the call failed');
      return 'call: hung up';
    });
  if (p.switches.has('profiles')) for (const l of catalogLines(sim.profiles)) out.line(l);
  const profile = v('profile');
  if (profile !== undefined)
    await step('profile', async () => {
      const r = await inspectProfile(sim.opts.relayUrl, sim.token!, profile);
      for (const l of r.lines) out.line(l);
      if (r.failed) throw new Error(`could not read every file of ${profile}`);
      const soul = v('soul');
      if (soul === undefined) return;
      const saved = await saveSoul(sim.opts.relayUrl, sim.token!, profile, soul);
      if (!saved.ok) throw new Error(saved.line);
      return saved.line;
    });
  const commands = p.values.get('shell');
  if (commands) await step('shell', () => shell(flows, commands));
  return failed;
}

/** A terminal tab that types each command, then `exit`, and waits for the shell to end (`eof`; anything else fails). */
async function shell(flows: PhoneFlows, commands: string[]): Promise<string> {
  await flows.attach();
  const ended = flows.detached();
  for (const c of commands) flows.input(`${c}\r`);
  flows.input('exit\r');
  const reason = String((await ended).payload.reason);
  if (reason !== 'eof') throw new Error(`the shell ended: ${reason}`);
  return 'shell exited';
}
