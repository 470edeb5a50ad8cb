import type { StoredEvent } from '@svc/events';
import { relayStarted } from '../../../../test/support/events';
import { given } from '../../../../test/support/given';
import { reportImageActivity } from '../image-activity/image-activity';
import { ReadModels } from '../read-models';
import {
  notificationKey,
  notificationPackage,
  notificationPostedAt,
  notificationText,
  postNotification,
  removeNotification,
  type PostedNotification,
} from './notifications';

const entry = (e: Partial<PostedNotification>): PostedNotification => ({
  packageName: 'a',
  title: null,
  text: null,
  subText: null,
  postedAt: null,
  key: null,
  ...e,
});

const started = relayStarted();

describe('notification companion rules', () => {
  // Spec 8: "Notification list: 100 entries".
  it('keeps the newest 100; a restart clears the list; the same event twice is harmless', () => {
    const m = new ReadModels();
    const stored: StoredEvent[] = [];
    for (let i = 0; i < 120; i++) {
      stored.push(...given(m, postNotification(m, { entryId: `n${i}`, tokenPrefix: 'p', deviceName: 'P', entry: entry({ title: `t${i}` }) })));
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

  it('field rules: notifications.bad_field naming the field; posted_at in seconds or milliseconds; texts cut to their limits', () => {
    const bad = (field: string, message: string) => expect.objectContaining({ code: 'notifications.bad_field', message, extra: { field } });
    expect(() => notificationPackage(undefined)).toThrow(bad('package_name', 'package_name is required (a string)'));
    expect(() => notificationPackage(' '.repeat(256) + 'x')).toThrow(bad('package_name', 'package_name is required (a string)'));
    expect(() => notificationPackage(7)).toThrow(bad('package_name', 'package_name must be a string'));
    expect(() => notificationText('title', 5)).toThrow(bad('title', 'title must be a string'));
    expect(notificationText('title', null)).toBeNull();
    expect(() => notificationPostedAt('yesterday')).toThrow(bad('posted_at', 'posted_at must be epoch seconds'));
    expect(() => notificationPostedAt(-1)).toThrow(bad('posted_at', 'posted_at must be epoch seconds'));
    expect(() => notificationPostedAt(9e15)).toThrow(bad('posted_at', 'posted_at is out of range'));
    expect(() => notificationKey('')).toThrow(bad('key', 'key is required (a string)'));
    const m = new ReadModels();
    const post = (e: Partial<PostedNotification>) => postNotification(m, { entryId: 'x', tokenPrefix: 'p', deviceName: 'P', entry: entry(e) });
    expect(post({ postedAt: 1772366400 })[0].data).toMatchObject({ postedAt: '2026-03-01T12:00:00.000Z' });
    expect(post({ postedAt: 1772366400123 })[0].data).toMatchObject({ postedAt: '2026-03-01T12:00:00.123Z' });
    expect(post({ text: 'y'.repeat(10_000) })[0].data).toMatchObject({ text: 'y'.repeat(4000) });
    expect(removeNotification(m, 'p', 'unknown')).toEqual([]);
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
