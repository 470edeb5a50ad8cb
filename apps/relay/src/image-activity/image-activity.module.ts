import { Body, Controller, Get, Header, HttpCode, Injectable, Module, Post, Query } from '@nestjs/common';
import { DomainError, ERROR_CODE_PATTERN, ID_PATTERN, IMAGE_ACTIVITY_STATUSES, reportImageActivity } from '@svc/domain';
import type { ImageActivityStatus } from '@svc/events';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { Auth } from '../common/auth';
import { EventLog } from '../common/event-log';

/**
 * The host platform's report of one image-generation step. Only these fields exist: anything else the
 * platform sends (a prompt, text, a tool result) is stripped by the whitelist before it reaches a rule.
 */
export class ReportDto {
  @IsString() @Matches(ID_PATTERN, { message: 'session_id: 1-128 characters of A-Z a-z 0-9 _ . : -' })
  session_id!: string;

  @IsString() @Matches(ID_PATTERN, { message: 'call_id: 1-128 characters of A-Z a-z 0-9 _ . : -' })
  call_id!: string;

  @IsIn(IMAGE_ACTIVITY_STATUSES as ImageActivityStatus[], { message: `status must be one of ${IMAGE_ACTIVITY_STATUSES.join(', ')}` })
  status!: ImageActivityStatus;

  /** Percent, with status `progress`. */
  @IsOptional() @IsInt({ message: 'progress must be a whole percent' }) @Min(0) @Max(100)
  progress?: number | null;

  /** A machine code (never a message), with status `failed`. */
  @IsOptional() @IsString() @Matches(ERROR_CODE_PATTERN, { message: 'error_code: 1-64 of a-z 0-9 _ . - (a code, not a message)' })
  error_code?: string | null;
}

@Injectable()
export class ImageActivityService {
  constructor(private readonly log: EventLog) {}

  async report(b: ReportDto) {
    const [e] = await this.log.run('operator', (m) =>
      reportImageActivity(m, { sessionId: b.session_id, callId: b.call_id, status: b.status, progress: b.progress ?? null, errorCode: b.error_code ?? null }),
    );
    return { ok: true as const, ts: Date.parse(e.at) / 1000 };
  }

  /** `since`: epoch seconds (fractions allowed); entries strictly after it. */
  list(sessionId: unknown, since: unknown) {
    if (typeof sessionId !== 'string' || !ID_PATTERN.test(sessionId)) {
      throw new DomainError('image_activity.bad_session_id', 'invalid', 'session_id is required: 1-128 characters of A-Z a-z 0-9 _ . : -');
    }
    let sinceMs: number | null = null;
    if (since !== undefined && since !== '') {
      const n = typeof since === 'string' && /^\d{1,12}(\.\d{1,6})?$/.test(since) ? Number(since) : NaN;
      if (!Number.isFinite(n)) throw new DomainError('image_activity.bad_since', 'invalid', 'since must be epoch seconds (a non-negative number)');
      sinceMs = n * 1000;
    }
    const entries = this.log.models.imageActivity.forSession(sessionId, sinceMs);
    const cursor = entries.length ? entries[entries.length - 1].at / 1000 : sinceMs === null ? null : sinceMs / 1000;
    return {
      ok: true as const,
      session_id: sessionId,
      activity: entries.map((x) => ({ call_id: x.callId, status: x.status, progress: x.progress, error_code: x.errorCode, ts: x.at / 1000 })),
      cursor,
    };
  }
}

@Controller('/chat/image-activity')
export class ImageActivityController {
  constructor(private readonly activity: ImageActivityService) {}

  /** Spec 4.3: paired with the `chat` grant; one session's lifecycle only. */
  @Get()
  @Auth('paired', 'chat')
  @Header('Cache-Control', 'no-store')
  list(@Query('session_id') sessionId: unknown, @Query('since') since: unknown) {
    return this.activity.list(sessionId, since);
  }

  /** The host platform's feed (loopback). */
  @Post()
  @HttpCode(201)
  @Auth('loopback')
  report(@Body() b: ReportDto) {
    return this.activity.report(b);
  }
}

@Module({ controllers: [ImageActivityController], providers: [ImageActivityService] })
export class ImageActivityModule {}
