import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import type { Principal } from '@svc/domain';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Auth, Caller } from '../common/auth/auth';
import { readAudioUpload } from './audio-upload';
import { BodyKeys } from './body-keys';
import { VoiceProviderChoices } from './provider-choices.service';
import { profileNamed } from './voice-config';
import {
  AgentSessionDto,
  AgentSettingsPatch,
  OutputSettingsPatch,
  ProfileQuery,
  RealtimeSettingsPatch,
  SelectionDto,
  SynthesizeDto,
  TranscribeQuery,
  VoiceSessionDto,
} from './voice.dto';
import { VoiceRefusalFilter } from './voice-refusal.filter';
import { VoiceService } from './voice.service';
import { VoiceSessions } from './voice-sessions.service';
import { VoiceSettings } from './voice-settings.service';

/**
 * Relay voice (spec 4.5). Every route takes a paired session's voice grant or API voice (the API bearer;
 * spec 5). Errors carry `success: false` beside `ok: false` (the reference relay's clients read `success`).
 */
@Controller('/voice')
@UseFilters(VoiceRefusalFilter)
export class VoiceController {
  constructor(
    private readonly voice: VoiceService,
    private readonly settings: VoiceSettings,
    private readonly choices: VoiceProviderChoices,
    private readonly sessions: VoiceSessions,
  ) {}

  /** A short-lived streaming TTS session; its socket is `/voice/output/{session_id}` (VoiceSessions). */
  @Post('/output/session')
  @Auth('voice', 'voice:tts')
  @HttpCode(200)
  outputSession(@Body() body: VoiceSessionDto, @Caller() caller: Principal) {
    return this.sessions.create('output', body, caller);
  }

  /** Experimental (spec 4.5): a realtime voice session on the same socket machinery (`/voice/realtime/{session_id}`). */
  @Post('/realtime/session')
  @Auth('voice', 'voice:realtime')
  @HttpCode(200)
  realtimeSession(@Body() body: VoiceSessionDto, @Caller() caller: Principal) {
    return this.sessions.create('realtime', body, caller);
  }

  /** Experimental (spec 4.5): the realtime-agent broker session (`/voice/realtime-agent/{session_id}`). */
  @Post('/realtime-agent/session')
  @Auth('voice', 'voice:realtime')
  @HttpCode(200)
  agentSession(@Body() body: AgentSessionDto, @Caller() caller: Principal) {
    return this.sessions.create('realtime_agent', body, caller);
  }

  @Get('/config')
  @Auth('voice', 'voice:config')
  config(@Query() q: ProfileQuery) {
    return this.voice.config_(q.profile);
  }

  /** multipart/form-data with one audio file (the first file part, whatever its field name). */
  @Post('/transcribe')
  @Auth('voice', 'voice:stt', { multipart: true })
  @HttpCode(200)
  async transcribe(
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Query() q: TranscribeQuery,
    @Caller() caller: Principal,
  ) {
    const upload = await readAudioUpload(req, reply, this.voice.maxAudioBytes);
    return this.voice.transcribe(upload, profileNamed(q.profile), q.language, caller);
  }

  /**
   * JSON `{text, profile?, voice?, model?, speed?, provider?, language?}` -> an `audio/mpeg` file. The app asks
   * `Accept: audio/mpeg` and shows a refusal's body as it is: such a client gets it as one line of text.
   */
  @Post('/synthesize')
  @Auth('voice', 'voice:tts', { plainRefusals: true })
  @HttpCode(200)
  async synthesize(@Body() body: SynthesizeDto, @Res({ passthrough: true }) reply: FastifyReply, @Caller() caller: Principal) {
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
  getOutputConfig(@Query() q: ProfileQuery) {
    return this.settings.withOptions('voice_output', q.profile);
  }

  @Patch('/output/config')
  @Auth('voice', 'voice:tts', { operatorOnLoopback: true })
  patchOutputConfig(@Body() body: OutputSettingsPatch, @BodyKeys() sent: string[], @Query() q: ProfileQuery, @Caller() caller: Principal) {
    return this.settings.patch('voice_output', body, sent, caller, q.profile);
  }

  @Get('/output/providers/:provider/options')
  @Auth('voice', 'voice:tts')
  outputOptions(@Param('provider') provider: string, @Query() q: ProfileQuery) {
    return this.choices.options('voice_output', provider, q.profile);
  }

  @Post('/output/providers/:provider/validate')
  @Auth('voice', 'voice:tts')
  @HttpCode(200)
  outputValidate(@Param('provider') provider: string, @Body() body: SelectionDto, @Query() _q: ProfileQuery) {
    return this.choices.validate('voice_output', provider, body);
  }

  @Get('/realtime/config')
  @Auth('voice', 'voice:realtime')
  getRealtimeConfig(@Query() q: ProfileQuery) {
    return this.settings.withOptions('realtime_voice', q.profile);
  }

  @Patch('/realtime/config')
  @Auth('voice', 'voice:realtime', { operatorOnLoopback: true })
  patchRealtimeConfig(@Body() body: RealtimeSettingsPatch, @BodyKeys() sent: string[], @Query() q: ProfileQuery, @Caller() caller: Principal) {
    return this.settings.patch('realtime_voice', body, sent, caller, q.profile);
  }

  @Get('/realtime/providers/:provider/options')
  @Auth('voice', 'voice:realtime')
  realtimeOptions(@Param('provider') provider: string, @Query() q: ProfileQuery) {
    return this.choices.options('realtime_voice', provider, q.profile);
  }

  @Post('/realtime/providers/:provider/validate')
  @Auth('voice', 'voice:realtime')
  @HttpCode(200)
  realtimeValidate(@Param('provider') provider: string, @Body() body: SelectionDto, @Query() _q: ProfileQuery) {
    return this.choices.validate('realtime_voice', provider, body);
  }

  @Get('/realtime-agent/config')
  @Auth('voice', 'voice:realtime')
  getAgentConfig(@Query() q: ProfileQuery) {
    return this.settings.withOptions('realtime_agent', q.profile);
  }

  @Patch('/realtime-agent/config')
  @Auth('voice', 'voice:realtime', { operatorOnLoopback: true })
  patchAgentConfig(@Body() body: AgentSettingsPatch, @BodyKeys() sent: string[], @Query() q: ProfileQuery, @Caller() caller: Principal) {
    return this.settings.patch('realtime_agent', body, sent, caller, q.profile);
  }

  @Get('/realtime-agent/providers/:provider/options')
  @Auth('voice', 'voice:realtime')
  agentOptions(@Param('provider') provider: string, @Query() q: ProfileQuery) {
    return this.choices.options('realtime_agent', provider, q.profile);
  }

  @Post('/realtime-agent/providers/:provider/validate')
  @Auth('voice', 'voice:realtime')
  @HttpCode(200)
  agentValidate(@Param('provider') provider: string, @Body() body: SelectionDto, @Query() _q: ProfileQuery) {
    return this.choices.validate('realtime_agent', provider, body);
  }
}
