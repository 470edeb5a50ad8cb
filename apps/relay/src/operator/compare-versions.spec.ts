import { compareVersions } from './update-feed';

describe('compareVersions', () => {
  it('compares dotted versions part by part, a pre-release before its release', () => {
    expect(compareVersions('0.2.0', '0.1.9')).toBe(1);
    expect(compareVersions('0.10.0', '0.9.0')).toBe(1);
    expect(compareVersions('1.0', '1.0.0')).toBe(0);
    expect(compareVersions('1.0.0-rc.1', '1.0.0')).toBe(-1);
    expect(compareVersions('1.0.0', '1.0.0-rc.1')).toBe(1);
    expect(compareVersions('0.1.0', '0.2.0')).toBe(-1);
  });
});
