import type { StoredEvent } from '@svc/events';
import { relayStarted } from '../../../../test/support/events';
import { given } from '../../../../test/support/given';
import { reportImageActivity } from '../image-activity/image-activity';
import { ReadModels } from '../read-models';
import { postNotification, removeNotification } from './notifications';

const started = relayStarted();

describe('notification companion rules', () => {
  // Spec 8: "Notification list: 100 entries".
  it('keeps the newest 100; a restart clears the list; the same event twice is harmless', () => {
    const m = new ReadModels();
    const stored: StoredEvent[] = [];
    for (let i = 0; i < 120; i++) {
      stored.push(
        ...given(m, postNotification(m, { entryId: `n${i}`, tokenPrefix: 'p', deviceName: 'P', payload: { package_name: 'a', title: `t${i}` } })),
      );
    }
    expect(m.notifications.count()).toBe(100);
    expect(m.notifications.recent(2).map((x) => x.title)).toEqual(['t119', 't118']);
    const twice = new ReadModels();
    for (const e of stored) {
      twice.apply(e);
      twice.apply(e);
    }
    expect(twice.notifications.snapshot()).toEqual(m.notifications.snapshot());
    given(m, [started]);
    expect(m.notifications.count()).toBe(0);
  });

  it('validates fields and accepts posted_at in seconds or milliseconds', () => {
    const m = new ReadModels();
    const post = (payload: Record<string, unknown>) => postNotification(m, { entryId: 'x', tokenPrefix: 'p', deviceName: 'P', payload });
    expect(() => post({})).toThrow(expect.objectContaining({ code: 'notifications.bad_field' }));
    expect(() => post({ package_name: 'a', title: 5 })).toThrow(expect.objectContaining({ extra: { field: 'title' } }));
    expect(post({ package_name: 'a', posted_at: 1772366400 })[0].data).toMatchObject({ postedAt: '2026-03-01T12:00:00.000Z' });
    expect(post({ package_name: 'a', posted_at: 1772366400123 })[0].data).toMatchObject({ postedAt: '2026-03-01T12:00:00.123Z' });
    expect(post({ package_name: 'a', text: 'y'.repeat(10_000) })[0].data).toMatchObject({ text: 'y'.repeat(4000) });
    expect(removeNotification(m, 'p', { key: 'unknown' })).toEqual([]);
  });
});

describe('image activity rules', () => {
  it('a finished call takes no more reports', () => {
    const m = new ReadModels();
    const r = (status: 'started' | 'progress' | 'completed' | 'failed', extra = {}) =>
      reportImageActivity(m, { sessionId: 's', callId: 'c', status, progress: null, errorCode: null, ...extra });
    given(m, r('started'));
    expect(() => r('started')).toThrow(expect.objectContaining({ code: 'image_activity.already_started', kind: 'conflict' }));
    given(m, r('progress', { progress: 10 }));
    given(m, r('completed'));
    expect(() => r('progress', { progress: 20 })).toThrow(expect.objectContaining({ code: 'image_activity.call_finished' }));
    expect(() => r('failed', { errorCode: 'x' })).toThrow(expect.objectContaining({ code: 'image_activity.call_finished' }));
    given(m, [started]);
    expect(m.imageActivity.forSession('s', null)).toEqual([]);
  });
});
