import type { ImageActivityEvent, ImageActivityStatus, NewEvent } from '@svc/events';
import { DomainError } from '../errors';
import type { ReadModels } from '../read-models';

export const IMAGE_ACTIVITY_STATUSES: readonly ImageActivityStatus[] = ['started', 'progress', 'completed', 'failed'];
/** Session and call ids: opaque, printable, bounded. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
export const ERROR_CODE_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,63}$/;

export type ReportImageActivity = {
  sessionId: string;
  callId: string;
  status: ImageActivityStatus;
  progress: number | null;
  errorCode: string | null;
};

/**
 * One lifecycle report. A call that completed or failed takes no further reports (409): a late or
 * replayed report must not make a finished image look busy again.
 */
export function reportImageActivity(m: ReadModels, cmd: ReportImageActivity): NewEvent<ImageActivityEvent>[] {
  if (!ID_PATTERN.test(cmd.sessionId))
    throw new DomainError('image_activity.bad_session_id', 'invalid', 'session_id: 1-128 characters of A-Z a-z 0-9 _ . : -');
  if (!ID_PATTERN.test(cmd.callId))
    throw new DomainError('image_activity.bad_call_id', 'invalid', 'call_id: 1-128 characters of A-Z a-z 0-9 _ . : -');
  if (cmd.errorCode !== null && cmd.status !== 'failed') {
    throw new DomainError('image_activity.error_code_without_failure', 'invalid', 'error_code is only taken with status "failed"');
  }
  if (cmd.progress !== null && cmd.status !== 'progress') {
    throw new DomainError('image_activity.progress_without_progress', 'invalid', 'progress is only taken with status "progress"');
  }
  const last = m.imageActivity.callStatus(cmd.sessionId, cmd.callId);
  if (last === 'completed' || last === 'failed') {
    throw new DomainError('image_activity.call_finished', 'conflict', `call ${cmd.callId} already ${last}`, { status: last });
  }
  if (cmd.status === 'started' && last !== undefined) {
    throw new DomainError('image_activity.already_started', 'conflict', `call ${cmd.callId} was already started`, { status: last });
  }
  return [{ type: 'chat.image_activity', data: cmd }];
}
