import { relayStarted } from '../../../../test/support/events';
import { given, Given } from '../../../../test/support/given';
import { DomainError } from '../errors';
import { ReadModels } from '../read-models';
import { expireMedia, markSensitive, recordTokenFetch, registerMedia, requireMedia, type MediaLimits, type NewMediaFile } from './media';

const T0 = Date.parse('2026-03-01T12:00:00.000Z');
const limits: MediaLimits = { ttlSeconds: 60, lruCap: 2, maxSizeBytes: 1000 };

const file = (n: number, extra: Partial<NewMediaFile> = {}): NewMediaFile => ({
  tokenDigest: `digest-${n}`,
  tokenPrefix: `prefix-${n}`,
  path: `/tmp/f${n}`,
  contentType: 'text/plain',
  fileName: null,
  size: 10,
  fileId: `1:${n}`,
  owned: false,
  sensitive: false,
  ...extra,
});
const reg =
  (n: number, extra: Partial<NewMediaFile> = {}) =>
  (m: ReadModels, now: Date) =>
    registerMedia(m, file(n, extra), { source: 'register' }, limits, now);

describe('media rules', () => {
  it('registers with an expiry TTL seconds from now', () => {
    const g = new Given();
    const [e] = g.when(reg(1));
    expect(e).toMatchObject({
      type: 'media.registered',
      data: { tokenDigest: 'digest-1', expiresAt: new Date(T0 + 60_000).toISOString(), source: 'register' },
    });
    expect(requireMedia(g.models, 'digest-1', new Date(T0)).path).toBe('/tmp/f1');
  });

  it('uploads are their own event, owned', () => {
    const g = new Given();
    const [e] = g.when((m, now) => registerMedia(m, file(1, { owned: true }), { upload: 'multipart' }, limits, now));
    expect(e).toMatchObject({ type: 'media.uploaded', data: { via: 'multipart', owned: true } });
    expect(g.models.media.byToken('digest-1')).toMatchObject({ source: 'upload', via: 'multipart' });
  });

  it('refuses a file over the cap', () => {
    given()
      .when(reg(1, { size: 1001 }))
      .thenThrows('media.too_large', 'forbidden');
  });

  it('evicts the least recently used beyond the cap, counting fetches as use', () => {
    const g = new Given();
    g.when(reg(1));
    g.when(reg(2));
    g.when((m, now) => recordTokenFetch(m, 'digest-1', { status: 200, start: 0, end: 9, size: 10 }, now));
    const events = g.when(reg(3));
    expect(events.map((e) => e.type)).toEqual(['media.evicted', 'media.registered']);
    expect(events[0].data).toMatchObject({ tokenDigest: 'digest-2', cap: 2, ownedPath: null });
    expect(
      g.models.media
        .all()
        .map((m) => m.tokenDigest)
        .sort(),
    ).toEqual(['digest-1', 'digest-3']);
  });

  it('expires overdue entries before evicting live ones', () => {
    const g = new Given();
    g.when(reg(1), T0);
    g.when(reg(2), T0 + 30_000);
    const events = g.when(reg(3), T0 + 60_000);
    expect(events.map((e) => e.type)).toEqual(['media.expired', 'media.registered']);
    expect(events[0].data).toMatchObject({ tokenDigest: 'digest-1' });
  });

  it('an expired token is refused before the sweep writes its expiry', () => {
    const g = new Given();
    g.when(reg(1));
    expect(() => requireMedia(g.models, 'digest-1', new Date(T0 + 60_000))).toThrow(
      expect.objectContaining({ code: 'media.expired', kind: 'not_found' }),
    );
    expect(() => requireMedia(g.models, 'nope', new Date(T0))).toThrow(DomainError);
  });

  it('the sweep expires only overdue entries and names owned files', () => {
    const g = new Given();
    g.when(reg(1, { owned: true, path: '/owned/a' }), T0);
    g.when(reg(2), T0 + 10_000);
    const events = g.when((m, now) => expireMedia(m, now), T0 + 60_000);
    expect(events).toMatchObject([{ type: 'media.expired', data: { tokenDigest: 'digest-1', tokenPrefix: 'prefix-1', ownedPath: '/owned/a' } }]);
    expect(events).toHaveLength(1);
    expect(g.when((m, now) => expireMedia(m, now), T0 + 60_000)).toEqual([]);
  });

  it('marking sensitive is idempotent', () => {
    const g = new Given();
    g.when(reg(1));
    expect(g.when((m, now) => markSensitive(m, 'digest-1', now))).toHaveLength(1);
    expect(g.when((m, now) => markSensitive(m, 'digest-1', now))).toEqual([]);
    expect(g.models.media.byToken('digest-1')!.sensitive).toBe(true);
  });

  it('counts holders of an owned file', () => {
    const g = new Given();
    g.when(reg(1, { owned: true, path: '/owned/a' }));
    g.when(reg(2, { owned: true, path: '/owned/a' }));
    expect(g.models.media.holders('/owned/a')).toBe(2);
    expect(g.models.media.ownedPaths()).toEqual(['/owned/a']);
  });
});

describe('media projection', () => {
  it('empties at relay.started', () => {
    const g = new Given();
    g.when(reg(1));
    g.apply([relayStarted()]);
    expect(g.models.media.count()).toBe(0);
  });

  it('the same fetch event applied twice counts once', () => {
    const g = new Given();
    g.when(reg(1));
    const [fetch] = g.when((m, now) => recordTokenFetch(m, 'digest-1', { status: 206, start: 0, end: 0, size: 10 }, now));
    g.models.media.apply(fetch); // the same event twice is harmless
    expect(g.models.media.byToken('digest-1')!.fetchCount).toBe(1);
  });

  it('snapshot and restore round-trip', () => {
    const g = new Given();
    g.when(reg(1));
    g.when(reg(2, { sensitive: true }));
    const copy = new ReadModels();
    copy.restore(structuredClone(g.models.snapshot()));
    expect(copy.media.snapshot()).toEqual(g.models.media.snapshot());
  });
});
