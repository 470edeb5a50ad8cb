import { Injectable } from '@nestjs/common';
import { DomainError, ID_PATTERN, reportImageActivity } from '@svc/domain';
import { EventLog } from '../common/event-log';
import type { ReportDto } from './image-activity.dto';

@Injectable()
export class ImageActivityService {
  constructor(private readonly log: EventLog) {}

  async report(b: ReportDto) {
    const [e] = await this.log.run('operator', (m) =>
      reportImageActivity(m, {
        sessionId: b.session_id,
        callId: b.call_id,
        status: b.status,
        progress: b.progress ?? null,
        errorCode: b.error_code ?? null,
      }),
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
