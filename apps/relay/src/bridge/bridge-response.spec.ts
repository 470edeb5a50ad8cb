import { foregroundShown } from './bridge-response';

describe('foregroundShown', () => {
  it('reads the package of /current_app and the packageName of /screen', () => {
    expect(foregroundShown('/current_app', { package: 'com.x8bit.bitwarden' })).toBe('com.x8bit.bitwarden');
    expect(foregroundShown('/screen', { packageName: 'com.android.chrome', nodes: [] })).toBe('com.android.chrome');
  });

  it('ignores other routes and anything that is not a package id', () => {
    expect(foregroundShown('/screen_hash', { packageName: 'com.android.chrome' })).toBeNull();
    expect(foregroundShown('/tap', { package: 'com.android.chrome' })).toBeNull();
    for (const v of [undefined, null, 42, '', 'chrome', 'com..x', '1com.x', `com.${'a'.repeat(300)}`, 'com.x; rm -rf /']) {
      expect(foregroundShown('/current_app', { package: v })).toBeNull();
    }
  });

  it('takes a package id by the same rule as a Device Control body (at most 255 characters)', () => {
    const id = (n: number) => `com.${'a'.repeat(n - 4)}`;
    expect(foregroundShown('/current_app', { package: id(255) })).toBe(id(255));
    expect(foregroundShown('/current_app', { package: id(256) })).toBeNull();
  });
});
