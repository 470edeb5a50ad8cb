import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { op, until } from '../support/bridge';
import { ensureBuilt } from '../support/dist';
import { readEvents, startRelay, tempHome, type TestRelay } from '../support/harness';
import { startPairedSim, type SimProcess } from '../support/phone-sim-process';
import { streamingAgent } from '../support/voice-client';

/*
 * `svc phone-sim`'s voice-mode call and Profiles (issue 36): the simulator as its own process against a real relay
 * (real socket, real espeak-ng, the relay's offline speech-to-text) and a stand-in for the agent host's chat API.
 * A call is a realtime-agent session opened, fed the mic's PCM and ended as the app does (apps/phone-sim/src/
 * phone-call.ts cites the Kotlin); the Voice page shows it live, then ended. The profile inspector's reads and SOUL
 * save land on the profile routes; the save is the Profiles page's write.
 */

jest.setTimeout(120_000);

/** A service home with a `work` profile the relay offers phones (its plugin enabled). */
function homeWithProfile(): string {
  const home = tempHome();
  fs.writeFileSync(path.join(home, 'config.yaml'), 'model:\n  default: host-model\nplugins:\n  enabled:\n    - svc-relay\n');
  const work = path.join(home, 'profiles', 'work');
  fs.mkdirSync(path.join(work, 'memories'), { recursive: true });
  fs.mkdirSync(path.join(work, 'skills', 'dev', 'review'), { recursive: true });
  fs.writeFileSync(path.join(work, 'skills', 'dev', 'review', 'SKILL.md'), 'x');
  fs.writeFileSync(path.join(work, 'config.yaml'), 'description: Work agent\nmodel: {default: work-model}\nplugins:\n  enabled: [svc-relay]\n');
  fs.writeFileSync(path.join(work, 'SOUL.md'), '# Work soul\n\nBe brief.\n');
  fs.writeFileSync(path.join(work, 'memories', 'notes.md'), 'remember the milk\n');
  return home;
}

describe('svc phone-sim: a voice-mode call and the profile inspector', () => {
  let relay: TestRelay;
  let agent: Awaited<ReturnType<typeof streamingAgent>>;
  const sims: SimProcess[] = [];

  beforeAll(async () => {
    ensureBuilt();
    agent = await streamingAgent();
    relay = await startRelay({
      home: homeWithProfile(),
      env: {
        PHONE_ENABLED: '1',
        VOICE_TOOLS_OPENAI_KEY: '',
        OPENAI_API_KEY: '',
        RELAY_WEBAPI_URL: agent.url,
        RELAY_REALTIME_VOICE_ENABLED: '1',
        API_SERVER_KEY: 'k'.repeat(32),
      },
    });
  });
  afterAll(async () => {
    for (const s of sims) s.child.kill('SIGKILL');
    await relay.close();
    await agent.close();
  });

  const start = (args: string[]) => startPairedSim(relay, sims, args);
  const ofSession = (type: string, id: string) => readEvents(relay.home).filter((e) => e.type === type && e.data.sessionId === id);
  // The record is in the file a moment before the read models (what the console answers from) applied it:
  // under load the GET right after the file showed it once still listed the call open.
  const endedEverywhere = (id: string) =>
    until(
      () =>
        ofSession('voice.session_ended', id).length === 1 &&
        !relay.loop.models.voice.openSessions().some((s) => s.sessionId === id) &&
        relay.loop.models.voiceActivity.recentSessions().some((s) => s.sessionId === id),
      15_000,
    );

  it('--call: the spoken turn is heard, the agent answers, its audio comes back, the call ends 1000; the Voice page lists it ended', async () => {
    const { sim, token } = await start(['--call', 'what is the weather in Lisbon']);
    expect(await sim.exited).toEqual({ code: 0, signal: null });
    const out = sim.output();
    expect(out).not.toContain(token());
    const id = /call: session (\S+) \(realtime agent\), streaming (\d+) bytes of 16000 Hz audio/.exec(out)!;
    expect(id).not.toBeNull();
    // The relay's offline speech-to-text hears espeak-ng roughly; what it heard is what the agent was asked.
    const heard = /call: the relay heard: (.+)/.exec(out)![1];
    expect(heard.trim().length).toBeGreaterThan(3);
    expect(out).toContain('call: tool.started web_search');
    expect(out).toContain('call: tool.completed web_search');
    expect(out).toContain('call: the agent replied: It is sunny in Lisbon.');
    const audio = /call: (\d+) bytes of audio in (\d+) chunk\(s\)/.exec(out)!;
    expect(Number(audio[1])).toBeGreaterThan(1000);
    expect(out).toContain('call: hung up');
    // The agent host got the heard words as the turn.
    expect(JSON.stringify(agent.calls.at(-1)!.body.messages.at(-1))).toContain(heard.trim());
    // The relay's record: the session opened by this phone, ended by the app's close 1000 (no hold for a resume).
    await endedEverywhere(id[1]);
    const view = await op(relay, 'GET', '/console/api/voice');
    const ended = view.body.ended_sessions.find((s: any) => s.session_id === id[1]);
    expect(ended).toMatchObject({ kind: 'realtime_agent', actor: expect.stringContaining(token().slice(0, 8)) });
    expect(view.body.open_sessions.some((s: any) => s.session_id === id[1])).toBe(false);
  });

  it('call typed at the prompt: the Voice page shows the call connected while the agent works, then ended; call-wav takes a WAV file', async () => {
    agent.hold = true;
    const { sim, token } = await start(['--interactive']);
    sim.type('call is it going to rain');
    const [, id] = await sim.waitFor(/call: session (\S+) \(realtime agent\)/);
    await sim.waitFor(/call: tool\.started web_search/);
    const live = (await op(relay, 'GET', '/console/api/voice')).body.open_sessions.find((s: any) => s.session_id === id);
    expect(live).toMatchObject({ kind: 'realtime_agent', state: 'connected', actor: expect.stringContaining(token().slice(0, 8)) });
    agent.release();
    agent.hold = false;
    await sim.waitFor(/call: hung up/);
    await endedEverywhere(id);
    const view = (await op(relay, 'GET', '/console/api/voice')).body;
    expect(view.open_sessions.some((s: any) => s.session_id === id)).toBe(false);
    expect(view.ended_sessions.some((s: any) => s.session_id === id)).toBe(true);

    const wav = path.join(relay.home, 'mic.wav');
    execFileSync('espeak-ng', ['-v', 'en-us', '-w', wav, 'hello world']);
    const mark = sim.output().length;
    sim.type(`call-wav ${wav}`, 'call-wav /nonexistent.wav', 'quit');
    await sim.waitFor(/call: the relay heard: .*(hello|world)[\s\S]*call: hung up/i, mark);
    await sim.waitFor(/call: ENOENT/, mark);
    expect(await sim.exited).toEqual({ code: 0, signal: null });
    expect(sim.output()).not.toContain(token());
  });

  it('profiles: the catalog from auth.ok, the inspector reads each file, Save writes SOUL.md; the Profiles page lists the write', async () => {
    const { sim, token } = await start(['--profiles', '--profile', 'work', '--soul', '# Work soul\n\nBe briefer.\n']);
    expect(await sim.exited).toEqual({ code: 0, signal: null });
    const out = sim.output();
    expect(out).not.toContain(token());
    expect(out).toMatch(/profile work: work-model, 1 skill\(s\), SOUL — Work agent/);
    expect(out).toMatch(/profile work config: model work-model/);
    expect(out).toMatch(/profile work SOUL: \d+ characters: # Work soul/);
    expect(out).toMatch(/profile work skills: 1 skill\(s\)/);
    expect(out).toMatch(/profile work memory: 1 file\(s\): notes\.md/);
    expect(out).toMatch(/profile work: SOUL\.md saved \(\d+ bytes\)/);
    expect(fs.readFileSync(path.join(relay.home, 'profiles', 'work', 'SOUL.md'), 'utf8')).toBe('# Work soul\n\nBe briefer.\n');
    const page = (await op(relay, 'GET', '/console/api/profiles')).body;
    expect(page.writes.find((w: any) => w.profile === 'work' && w.file === 'SOUL.md')).toMatchObject({
      actor: expect.stringContaining(token().slice(0, 8)),
    });

    // A profile the relay does not have: the inspector's words, and the flow fails (exit 1).
    const missing = await start(['--profile', 'nobody']);
    expect(await missing.sim.exited).toEqual({ code: 1, signal: null });
    expect(missing.sim.output()).toMatch(/profile nobody config: Profile 'nobody' not found on relay/);
  });
});
