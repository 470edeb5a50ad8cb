import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { dc, op, until } from '../support/bridge';
import { ensureBuilt } from '../support/dist';
import { readEvents, startRelay, type TestRelay } from '../support/harness';
import { call } from '../support/http';
import { startPairedSim, type SimProcess } from '../support/phone-sim-process';

/*
 * `svc phone-sim` drives every phone flow the app has, not only Device Control (issue 36): run as its own process, as
 * an operator runs it, with one-shot flags and with lines typed on its stdin, against a real relay (real socket, real
 * pty, real espeak-ng). Each flow is checked where the relay keeps it: the console's routes, the host's routes, the
 * event log. The frames it sends are the app's (apps/phone-sim/src/phone-flows.ts cites the Kotlin for each).
 */

jest.setTimeout(90_000);

const SHELL = path.join(__dirname, '../fixtures/bash-norc');

describe('svc phone-sim: the phone flows beside Device Control', () => {
  let relay: TestRelay;
  const sims: SimProcess[] = [];

  beforeAll(async () => {
    ensureBuilt();
    relay = await startRelay({
      env: { PHONE_ENABLED: '1', VOICE_TOOLS_OPENAI_KEY: '', OPENAI_API_KEY: '' },
      config: { terminalShell: SHELL, tuiCommand: null },
    });
  });
  afterAll(async () => {
    for (const s of sims) s.child.kill('SIGKILL');
    await relay.close();
  });

  const start = (args: string[]) => startPairedSim(relay, sims, args);
  const events = (type: string, prefix: string) => readEvents(relay.home).filter((e) => e.type === type && e.data.tokenPrefix === prefix);

  it('one-shot flags: notifications, speech and a shell command run in order, then it exits 0; the Threads page, the log and the Voice page have them', async () => {
    const mp3 = path.join(relay.home, 'spoken.mp3');
    const { sim, token } = await start([
      '--name',
      'Flag phone',
      '--notify',
      'Build|green on main',
      '--notify',
      '|just a text',
      '--notify-app',
      'com.example.ci',
      '--say',
      'the build is green',
      '--audio-out',
      mp3,
      '--shell',
      'echo sim-$((6*7))',
      '--shell',
      'stty size',
    ]);
    expect(await sim.exited).toEqual({ code: 0, signal: null });
    const out = sim.output();
    const prefix = token().slice(0, 8);
    expect(out).not.toContain(token());
    // The shell's own output, in the order typed: the app's default 80x24 tab (TerminalViewModel.kt:107).
    expect(out).toMatch(/sim-42[\s\S]*24 80[\s\S]*shell detached: eof \(exit code 0\)[\s\S]*shell exited/);
    expect(out).toMatch(/the relay spoke (\d+) bytes of audio\/mpeg \(saved to /);
    const audio = fs.readFileSync(mp3);
    expect(audio.toString('latin1', 0, 3) === 'ID3' || (audio[0] === 0xff && (audio[1] & 0xe0) === 0xe0)).toBe(true);

    // The Threads page lists the phone's notifications, newest first, as the app's listener sent them.
    const view = await op(relay, 'GET', '/console/api/threads');
    expect(
      view.body.notifications.filter((n: any) => n.token_prefix === prefix).map((n: any) => [n.device_name, n.package_name, n.title, n.text]),
    ).toEqual([
      ['Flag phone', 'com.example.ci', null, 'just a text'],
      ['Flag phone', 'com.example.ci', 'Build', 'green on main'],
    ]);
    // The host's tool reads the same list (loopback, no bearer).
    const recent = await call(relay, 'GET', '/notifications/recent?limit=5');
    expect(recent.body.notifications.find((n: any) => n.token_prefix === prefix && n.title === 'Build').key).toMatch(
      /^0\|com\.example\.ci\|\d+\|null\|\d+$/,
    );

    expect(events('notification.posted', prefix)).toHaveLength(2);
    const opened = events('terminal.opened', prefix);
    expect(opened).toHaveLength(1);
    expect(opened[0].data).toMatchObject({ cols: 80, rows: 24, sessionName: expect.stringMatching(/^svc-.+-tab1$/) });
    expect(events('terminal.closed', prefix)[0].data).toMatchObject({ reason: 'exited', exitCode: 0 });
    // The Voice page's recent calls: the phone's synthesis, its size, never its words.
    const spoken = readEvents(relay.home).filter((e) => e.type === 'voice.synthesized' && e.data.chars === 'the build is green'.length);
    expect(spoken).toHaveLength(1);
    expect(spoken[0].data).toMatchObject({ outcome: 'ok', bytes: audio.length });
    expect(JSON.stringify(spoken[0])).not.toContain('the build is green');
  });

  it('Threads by flags: --reply subscribes, takes the queued message and answers it; the host reads the reply; --chat answers a named conversation', async () => {
    const posted = await call(relay, 'POST', '/phone/message', { chat_id: 'ops', title: 'Ops', text: 'ship the release?' });
    expect(posted.body.queued).toBe(true);
    const { sim, token } = await start(['--reply', 'ship it']);
    expect(await sim.exited).toEqual({ code: 0, signal: null });
    const prefix = token().slice(0, 8);
    expect(sim.output()).toMatch(/thread ops · Ops \(arrived while away\): ship the release\?[\s\S]*reply received by the relay \(/);
    expect(events('phone.subscribed', prefix)).toHaveLength(1);
    const [reply] = events('phone.reply_received', prefix);
    // ConnectionViewModel.kt:2619-2645: the message's chat and id, and the app-minted id it settles its bubble on.
    expect(reply.data).toMatchObject({ chatId: 'ops', replyTo: posted.body.message_id, via: 'ws', clientMsgId: expect.any(String) });
    const host = await call(relay, 'GET', '/phone/replies?timeout=5');
    expect(host.body.replies.filter((r: any) => r.token_prefix === prefix).map((r: any) => [r.chat_id, r.text, r.reply_to])).toEqual([
      ['ops', 'ship it', posted.body.message_id],
    ]);
    const thread = (await op(relay, 'GET', '/console/api/threads')).body.threads.find((t: any) => t.chat_id === 'ops');
    expect(thread).toMatchObject({ messages: 1, replies: 1 });

    const named = await start(['--reply', 'weekly notes are up', '--chat', 'notes', '--reply-to', 'm-77']);
    expect(await named.sim.exited).toEqual({ code: 0, signal: null });
    const p2 = named.token().slice(0, 8);
    expect(events('phone.subscribed', p2)).toHaveLength(0);
    expect(events('phone.reply_received', p2)[0].data).toMatchObject({ chatId: 'notes', replyTo: 'm-77' });
  });

  it('interactive, typed on stdin: notify, threads live, reply, a shell (input, resize, detach), clipboard both ways, say, hear, status, quit', async () => {
    const { sim, token } = await start(['--interactive', '--name', 'Typing phone']);
    sim.type('status');
    // A token is base64url: its prefix may hold '-' (CI once drew `tVE-EYW_`), so match the alphabet, then the prefix itself.
    const paired = await sim.waitFor(/paired as ([A-Za-z0-9_-]{8})… \(device phone-sim-[\w-]+, app mode\)/);
    const prefix = token().slice(0, 8);
    expect(paired[1]).toBe(prefix);

    let mark = sim.output().length;
    sim.type('notify Lunch | at noon?');
    await sim.waitFor(/notification posted/, mark);
    const notes = (await op(relay, 'GET', '/console/api/threads')).body.notifications.filter((n: any) => n.token_prefix === prefix);
    expect(notes.map((n: any) => [n.device_name, n.title, n.text])).toEqual([['Typing phone', 'Lunch', 'at noon?']]);

    sim.type('threads');
    await sim.waitFor(/threads: subscribed; \d+ queued message\(s\) delivered/, mark);
    mark = sim.output().length;
    const live = await call(relay, 'POST', '/phone/message', { chat_id: 'daily', title: 'Standup', text: 'anything blocking?' });
    expect(live.body.delivered).toBe(true);
    await sim.waitFor(/thread daily · Standup: anything blocking\?/, mark);
    sim.type('reply nothing, thanks');
    await sim.waitFor(/reply received by the relay/, mark);
    expect(events('phone.reply_received', prefix)[0].data).toMatchObject({ chatId: 'daily', replyTo: live.body.message_id });

    mark = sim.output().length;
    sim.type('shell');
    await sim.waitFor(/shell \S+ \(pid \d+\) attached/, mark);
    sim.type('echo typed-$((6*7))');
    await sim.waitFor(/typed-42/, mark);
    sim.type('~r 100x30', 'stty size');
    await sim.waitFor(/30 100/, mark);
    // The Terminal page lists the shell as attached, at the size the tab asked.
    const shells = (await op(relay, 'GET', '/console/api/terminal')).body.shells.filter((s: any) => s.token_prefix === prefix);
    expect(shells.map((s: any) => [s.attached, s.cols, s.rows])).toEqual([[true, 100, 30]]);
    sim.type('~.');
    await sim.waitFor(/left the shell \(client detach\)/, mark);
    expect(events('terminal.detached', prefix)).toHaveLength(1);

    // The clipboard moves as the app's does, through Device Control's /clipboard with the phone's own bearer.
    sim.type('clip copied on the phone');
    await sim.waitFor(/copied 19 characters on the phone/, mark);
    expect((await dc(relay, token(), 'GET', '/clipboard')).body).toEqual({ text: 'copied on the phone' });
    expect((await dc(relay, token(), 'POST', '/clipboard', { text: 'sent by the host' })).status).toBe(200);
    mark = sim.output().length;
    sim.type('clip get');
    await sim.waitFor(/phone clipboard: sent by the host/, mark);

    sim.type('say good morning');
    await sim.waitFor(/the relay spoke \d+ bytes of audio\/mpeg/, mark);
    expect(readEvents(relay.home).filter((e) => e.type === 'voice.synthesized' && e.data.chars === 'good morning'.length)).toHaveLength(1);
    // Dictation: a spoken WAV (the same espeak-ng the offline provider uses) uploaded as the app does, the text back.
    const wav = path.join(relay.home, 'dictated.wav');
    execFileSync('espeak-ng', ['-v', 'en-us', '-w', wav, 'hello world']);
    sim.type(`hear ${wav}`);
    await sim.waitFor(/the relay heard: .*(hello|world)/, mark);
    const heard = readEvents(relay.home).filter((e) => e.type === 'voice.transcribed' && e.data.bytes === fs.statSync(wav).size);
    expect(heard.map((e) => e.data.outcome)).toEqual(['ok']);

    sim.type('frobnicate now', 'status');
    await sim.waitFor(/unknown command "frobnicate"; type help for the list/, mark);
    await sim.waitFor(/threads: subscribed, 1 message\(s\), newest in daily[\s\S]*shell: none/, mark);
    sim.type('quit');
    expect(await sim.exited).toEqual({ code: 0, signal: null });
    expect(sim.output()).not.toContain(token());
    // It left cleanly: the relay recorded the socket's close.
    await until(() => readEvents(relay.home).some((e) => e.type === 'phone.disconnected' && e.data.tokenPrefix === prefix), 15_000);
  });
});
