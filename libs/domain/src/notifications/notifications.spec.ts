import { imageActivityReported, notificationPosted, relayStarted } from '../../../../test/support/events';
import { given, Given, type Decision } from '../../../../test/support/given';
import { reportImageActivity, type ReportImageActivity } from '../image-activity/image-activity';
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

describe('notification companion rules', () => {
  // Spec 8: "Notification list: 100 entries".
  it('keeps the newest 100; a restart clears the list; the same event twice is harmless', () => {
    const g = new Given().apply(Array.from({ length: 120 }, (_, i) => notificationPosted({ entryId: `n${i}`, title: `t${i}` })));
    expect(g.models.notifications.count()).toBe(100);
    expect(g.models.notifications.recent(2).map((x) => x.title)).toEqual(['t119', 't118']);
    const twice = new ReadModels();
    for (const e of g.log) {
      twice.apply(e);
      twice.apply(e);
    }
    expect(twice.notifications.snapshot()).toEqual(g.models.notifications.snapshot());
    g.apply([relayStarted()]);
    expect(g.models.notifications.count()).toBe(0);
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
    const post =
      (e: Partial<PostedNotification>): Decision =>
      (m) =>
        postNotification(m, { entryId: 'x', tokenPrefix: 'p', deviceName: 'P', entry: entry(e) });
    const posted = (data: Partial<ReturnType<typeof notificationPosted>['data']>) =>
      notificationPosted({ entryId: 'x', tokenPrefix: 'p', deviceName: 'P', ...data });
    given()
      .when(post({ postedAt: 1772366400 }))
      .then([posted({ postedAt: '2026-03-01T12:00:00.000Z' })]);
    given()
      .when(post({ postedAt: 1772366400123 }))
      .then([posted({ postedAt: '2026-03-01T12:00:00.123Z' })]);
    given()
      .when(post({ text: 'y'.repeat(10_000) }))
      .then([posted({ text: 'y'.repeat(4000) })]);
    given()
      .when((m) => removeNotification(m, 'p', 'unknown'))
      .then([]);
  });
});

describe('image activity rules', () => {
  it('a finished call takes no more reports', () => {
    const report =
      (status: ReportImageActivity['status'], extra: Partial<ReportImageActivity> = {}): Decision =>
      (m) =>
        reportImageActivity(m, { sessionId: 's', callId: 'c', status, progress: null, errorCode: null, ...extra });
    const g = given();
    g.when(report('started')).then([imageActivityReported({ status: 'started' })]);
    g.when(report('started')).thenThrows('image_activity.already_started', 'conflict');
    g.when(report('progress', { progress: 10 })).then([imageActivityReported({ status: 'progress', progress: 10 })]);
    g.when(report('completed')).then([imageActivityReported({ status: 'completed' })]);
    g.when(report('progress', { progress: 20 })).thenThrows('image_activity.call_finished');
    g.when(report('failed', { errorCode: 'x' })).thenThrows('image_activity.call_finished');
    g.state.apply([relayStarted()]);
    expect(g.models.imageActivity.forSession('s', null)).toEqual([]);
  });
});
