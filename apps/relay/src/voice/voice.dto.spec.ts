import 'reflect-metadata';
import type { BadRequestException } from '@nestjs/common';
import { parseFrame } from '../common/sockets/parse-frame';
import { RelayValidationPipe } from '../common/http/validation';
import { PROFILE_NAME_RULE } from './voice-config';
import { AgentSessionDto, OutputSettingsPatch, ProfileQuery, RealtimeSettingsPatch, SynthesizeDto, VoiceSessionDto } from './voice.dto';
import { AckFrame, InputAudioFrame, ResumeFrame } from './voice-frames.dto';

const pipe = new RelayValidationPipe();
/** The body as the relay-wide pipe reads it: the instance, or the refusal's message. */
async function body<T>(dto: new () => T, value: unknown): Promise<T | string> {
  return (pipe.transform(value, { type: 'body', metatype: dto }) as Promise<T>).catch((e: BadRequestException) =>
    (e.getResponse() as { message: string[] }).message.join('; '),
  );
}

describe('voice bodies', () => {
  it('synthesize: text trimmed and required, with the messages the clients read; loose fields dropped, not refused', async () => {
    expect(await body(SynthesizeDto, {})).toBe("'text' must be a string");
    expect(await body(SynthesizeDto, { text: 5 })).toBe("'text' must be a string");
    expect(await body(SynthesizeDto, { text: '   ' })).toBe("'text' must not be empty");
    expect(await body(SynthesizeDto, { text: 'hi', profile: '../etc' })).toBe(PROFILE_NAME_RULE);
    const ok = await body(SynthesizeDto, { text: ' hi ', voice: 5, model: 'm', speed: 'fast', provider: 7, profile: '' });
    expect({ ...(ok as SynthesizeDto) }).toEqual({ text: 'hi', model: 'm', provider: 7, profile: '' });
  });

  it('a session: voice and model at most 128 characters (else the section’s), a provider name or none', async () => {
    const ok = (await body(VoiceSessionDto, { voice: ' en-gb ', model: 'x'.repeat(129), provider: 3, profile: null })) as VoiceSessionDto;
    expect({ ...ok }).toEqual({ voice: 'en-gb', profile: null });
  });

  it("the realtime agent's session: a chat session id, and only the last 14 context messages (checked), null is not a list", async () => {
    const good = { role: 'user', content: 'hello' };
    const twenty = [{ role: 'tool', content: 1 }, ...Array.from({ length: 19 }, () => good)];
    const r = (await body(AgentSessionDto, { chat_session_id: 'chat:1', context_messages: twenty })) as AgentSessionDto;
    expect(r.context_messages).toHaveLength(14);
    expect(await body(AgentSessionDto, { chat_session_id: '../x' })).toBe('chat_session_id must be 1-128 letters, digits, "_", ".", ":" or "-"');
    expect(await body(AgentSessionDto, { context_messages: null })).toBe('context_messages must be a list');
    expect(await body(AgentSessionDto, { context_messages: [good, { role: 'tool', content: 'x' }] })).toBe(
      'each context message is {"role": "user"|"assistant"|"system", "content": "..."}',
    );
    expect({ ...((await body(AgentSessionDto, { chat_session_id: '' })) as AgentSessionDto) }).toEqual({ chat_session_id: '' });
  });

  it("a settings PATCH: each section's settings with one message each; null removes; a key of no setting is dropped here (the domain refuses it by name)", async () => {
    expect(await body(OutputSettingsPatch, { sample_rate: -1 })).toBe('sample_rate must be a whole number from 0 to 192000');
    expect(await body(OutputSettingsPatch, { sample_rate: 'x' })).toBe('sample_rate must be a whole number from 0 to 192000');
    expect(await body(OutputSettingsPatch, { enabled: 'yes' })).toBe('enabled must be true or false');
    expect(await body(OutputSettingsPatch, { voice: 'a\nb' })).toBe('voice must be a non-empty string of at most 128 characters');
    expect({ ...((await body(OutputSettingsPatch, { voice: null, codec: 'pcm', api_key: 'x' })) as object) }).toEqual({ voice: null, codec: 'pcm' });
    // `codec` is a voice_output setting only.
    expect({ ...((await body(RealtimeSettingsPatch, { codec: 'pcm', enabled: true })) as object) }).toEqual({ enabled: true });
  });

  it('?profile=: a profile name, or empty for none', async () => {
    const q = (value: unknown) => pipe.transform(value, { type: 'query', metatype: ProfileQuery, data: undefined });
    await expect(q({ profile: '' })).resolves.toEqual({ profile: '' });
    for (const bad of ['..', '.hidden', 'a/b', 'x'.repeat(65), ['a', 'b']]) await expect(q({ profile: bad })).rejects.toThrow();
  });
});

describe('voice socket frames', () => {
  it('session.resume: the token, and cursors that are whole numbers (absent or null: 0), one message for all four', () => {
    const r = parseFrame(ResumeFrame, { type: 'session.resume', resume_token: 't', last_event_id: 4, last_audio_event_id: null });
    expect(r.ok && { ...r.value }).toEqual({
      resume_token: 't',
      last_event_id: 4,
      last_audio_event_id: 0,
      last_played_audio_event_id: 0,
      last_input_chunk_id: 0,
    });
    const counts = 'last_event_id, last_audio_event_id, last_played_audio_event_id and last_input_chunk_id are whole numbers >= 0';
    expect(parseFrame(ResumeFrame, { resume_token: 't', last_event_id: -1, last_input_chunk_id: 1.5 })).toMatchObject({
      ok: false,
      error: { message: counts },
    });
    expect(parseFrame(ResumeFrame, { resume_token: 'x'.repeat(257) })).toMatchObject({
      ok: false,
      error: { message: 'session.resume needs the resume_token of the session' },
    });
  });

  it('input_audio.append: base64 audio required, a rate of 8-48 kHz (else 24 kHz), a chunk id when it is one', () => {
    const r = parseFrame(InputAudioFrame, { audio_base64: ' AAAA ', sample_rate: 16000, chunk_id: 3 });
    expect(r.ok && { ...r.value }).toEqual({ audio_base64: 'AAAA', sample_rate: 16000, chunk_id: 3 });
    const loose = parseFrame(InputAudioFrame, { audio_base64: 'AAAA', sample_rate: 96000, chunk_id: -1 });
    expect(loose.ok && { ...loose.value }).toEqual({ audio_base64: 'AAAA', sample_rate: 24000 });
    expect(parseFrame(InputAudioFrame, { audio_base64: '  ' })).toMatchObject({ error: { message: 'input_audio.append missing audio_base64' } });
    expect(parseFrame(InputAudioFrame, { audio_base64: 7 })).toMatchObject({ error: { message: 'input_audio.append missing audio_base64' } });
    expect(parseFrame(InputAudioFrame, { audio_base64: 'AA=A' })).toMatchObject({ error: { message: 'input_audio.append audio_base64 is invalid' } });
  });

  it('client.ack: a positive whole event id, else nothing', () => {
    expect(parseFrame(AckFrame, { event_id: 3 }).ok).toBe(true);
    for (const event_id of [0, -1, 1.5, '3', undefined]) expect(parseFrame(AckFrame, { event_id }).ok).toBe(false);
  });
});
