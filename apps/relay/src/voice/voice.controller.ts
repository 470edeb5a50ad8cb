import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { DomainError, type Principal } from '@svc/domain';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Auth, Caller } from '../common/auth';
import { VoiceService } from './voice.service';
import { VoiceSessions } from './voice-sessions.service';

/**
 * Relay voice (spec 4.5). Every route takes a paired session's voice grant or API voice (the API bearer;
 * spec 5). Errors carry `success: false` beside `ok: false` (the reference relay's clients read `success`).
 */
@Controller('/voice')
export class VoiceController {
  constructor(
    private readonly voice: VoiceService,
    private readonly output: VoiceSessions,
  ) {}

  /** A short-lived streaming TTS session; its socket is `/voice/output/{session_id}` (VoiceSessions). */
  @Post('/output/session')
  @Auth('voice', 'voice:tts')
  @HttpCode(200)
  outputSession(@Body() body: unknown, @Caller() caller: Principal) {
    return this.output.create('output', body, caller);
  }

  /** Experimental (spec 4.5): a realtime voice session on the same socket machinery (`/voice/realtime/{session_id}`). */
  @Post('/realtime/session')
  @Auth('voice', 'voice:realtime')
  @HttpCode(200)
  realtimeSession(@Body() body: unknown, @Caller() caller: Principal) {
    return this.output.create('realtime', body, caller);
  }

  /** Experimental (spec 4.5): the realtime-agent broker session (`/voice/realtime-agent/{session_id}`). */
  @Post('/realtime-agent/session')
  @Auth('voice', 'voice:realtime')
  @HttpCode(200)
  agentSession(@Body() body: unknown, @Caller() caller: Principal) {
    return this.output.create('realtime_agent', body, caller);
  }

  @Get('/config')
  @Auth('voice', 'voice:config')
  config(@Query('profile') profile: unknown) {
    return this.voice.config_(profile);
  }

  /** multipart/form-data with one audio file (the first file part, whatever its field name). */
  @Post('/transcribe')
  @Auth('voice', 'voice:stt')
  @HttpCode(200)
  async transcribe(
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Query('profile') profile: unknown,
    @Query('language') language: unknown,
    @Caller() caller: Principal,
  ) {
    const profileName = this.voice.profileOf(profile);
    if (!req.isMultipart())
      throw new DomainError('voice.bad_upload', 'unsupported', 'send the audio as multipart/form-data with a file part', { success: false });
    const max = this.voice.maxAudioBytes;
    let upload: { audio: Buffer; contentType: string; fileName: string } | null = null;
    try {
      for await (const part of req.parts({ limits: { fileSize: max + 1, files: 1, fields: 8, parts: 9, fieldSize: 1024 } })) {
        if (part.type !== 'file') continue;
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const c of part.file as AsyncIterable<Buffer>) {
          size += c.length;
          if (size > max) {
            void reply.header('connection', 'close');
            throw new DomainError('voice.audio_too_large', 'too_large', `audio exceeds ${max} bytes (RELAY_VOICE_MAX_AUDIO_BYTES)`, {
              success: false,
              max_bytes: max,
            });
          }
          chunks.push(c);
        }
        upload = { audio: Buffer.concat(chunks), contentType: part.mimetype ?? '', fileName: part.filename ?? 'audio' };
      }
    } catch (err) {
      if (err instanceof DomainError) throw err;
      const code = (err as { code?: string }).code ?? '';
      if (code === 'FST_REQ_FILE_TOO_LARGE')
        throw new DomainError('voice.audio_too_large', 'too_large', `audio exceeds ${max} bytes (RELAY_VOICE_MAX_AUDIO_BYTES)`, {
          success: false,
          max_bytes: max,
        });
      throw new DomainError('voice.bad_upload', 'invalid', `malformed multipart body${code ? ` (${code})` : ''}`, { success: false });
    }
    if (!upload) throw new DomainError('voice.bad_upload', 'invalid', 'no audio file in the multipart body', { success: false });
    // A caller that hangs up stops its transcription (the provider kills its programs).
    const gone = new AbortController();
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) gone.abort();
    });
    return this.voice.transcribe({ ...upload, signal: gone.signal }, profileName, language, caller);
  }

  /** JSON `{text, profile?, voice?, model?, speed?, provider?}` -> an `audio/mpeg` file. */
  @Post('/synthesize')
  @Auth('voice', 'voice:tts')
  @HttpCode(200)
  async synthesize(@Body() body: unknown, @Res({ passthrough: true }) reply: FastifyReply, @Caller() caller: Principal) {
    const out = await this.voice.synthesize(body, caller);
    void reply
      .header('content-type', 'audio/mpeg')
      .header('cache-control', 'private, no-store')
      .header('content-disposition', 'inline; filename="tts.mp3"')
      .header('x-voice-provider', out.provider);
    return out.audio;
  }

  @Get('/output/config')
  @Auth('voice', 'voice:tts')
  getOutputConfig(@Query('profile') profile: unknown) {
    return this.voice.settingsWithOptions('voice_output', profile);
  }

  @Patch('/output/config')
  @Auth('voice', 'voice:tts', { operatorOnLoopback: true })
  patchOutputConfig(@Body() body: unknown, @Query('profile') profile: unknown, @Caller() caller: Principal) {
    return this.voice.patchSettings('voice_output', body, caller, profile);
  }

  @Get('/output/providers/:provider/options')
  @Auth('voice', 'voice:tts')
  outputOptions(@Param('provider') provider: string, @Query('profile') profile: unknown) {
    return this.voice.providerOptions('voice_output', provider, profile);
  }

  @Post('/output/providers/:provider/validate')
  @Auth('voice', 'voice:tts')
  @HttpCode(200)
  outputValidate(@Param('provider') provider: string, @Body() body: unknown, @Query('profile') profile: unknown) {
    return this.voice.validate('voice_output', provider, body, profile);
  }

  @Get('/realtime/config')
  @Auth('voice', 'voice:realtime')
  getRealtimeConfig(@Query('profile') profile: unknown) {
    return this.voice.settingsWithOptions('realtime_voice', profile);
  }

  @Patch('/realtime/config')
  @Auth('voice', 'voice:realtime', { operatorOnLoopback: true })
  patchRealtimeConfig(@Body() body: unknown, @Query('profile') profile: unknown, @Caller() caller: Principal) {
    return this.voice.patchSettings('realtime_voice', body, caller, profile);
  }

  @Get('/realtime/providers/:provider/options')
  @Auth('voice', 'voice:realtime')
  realtimeOptions(@Param('provider') provider: string, @Query('profile') profile: unknown) {
    return this.voice.providerOptions('realtime_voice', provider, profile);
  }

  @Post('/realtime/providers/:provider/validate')
  @Auth('voice', 'voice:realtime')
  @HttpCode(200)
  realtimeValidate(@Param('provider') provider: string, @Body() body: unknown, @Query('profile') profile: unknown) {
    return this.voice.validate('realtime_voice', provider, body, profile);
  }

  @Get('/realtime-agent/config')
  @Auth('voice', 'voice:realtime')
  getAgentConfig(@Query('profile') profile: unknown) {
    return this.voice.settingsWithOptions('realtime_agent', profile);
  }

  @Patch('/realtime-agent/config')
  @Auth('voice', 'voice:realtime', { operatorOnLoopback: true })
  patchAgentConfig(@Body() body: unknown, @Query('profile') profile: unknown, @Caller() caller: Principal) {
    return this.voice.patchSettings('realtime_agent', body, caller, profile);
  }

  @Get('/realtime-agent/providers/:provider/options')
  @Auth('voice', 'voice:realtime')
  agentOptions(@Param('provider') provider: string, @Query('profile') profile: unknown) {
    return this.voice.providerOptions('realtime_agent', provider, profile);
  }

  @Post('/realtime-agent/providers/:provider/validate')
  @Auth('voice', 'voice:realtime')
  @HttpCode(200)
  agentValidate(@Param('provider') provider: string, @Body() body: unknown, @Query('profile') profile: unknown) {
    return this.voice.validate('realtime_agent', provider, body, profile);
  }
}
