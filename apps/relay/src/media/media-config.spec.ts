import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../common/config/config';
import { ConfigError } from '../common/config/config-env';

/** RELAY_MEDIA_* and SVC_WORKSPACE (spec 4.13). */
describe('media configuration', () => {
  const base = { SVC_HOME: '/srv/svc' };

  it('defaults: 100 MiB, one day, 500 entries, no extra roots, sandbox off, workspace under svc_home', () => {
    expect(loadConfig({ ...base, HOME: '/home/ada', TMPDIR: '/var/tmp/ada' }).media).toEqual({
      maxSizeBytes: 100 * 1024 * 1024,
      ttlSeconds: 86_400,
      lruCap: 500,
      allowedRoots: [],
      strictSandbox: false,
      workspace: '/srv/svc/workspace',
      home: '/home/ada',
      tmpDir: '/var/tmp/ada',
    });
  });

  it('without TMPDIR in its environment, the temp dir is the OS default', () => {
    expect(loadConfig(base).media.tmpDir).toBe(path.resolve(os.tmpdir()));
  });

  it('reads every variable', () => {
    const m = loadConfig({
      ...base,
      RELAY_MEDIA_MAX_SIZE_MB: '0.5',
      RELAY_MEDIA_TTL_SECONDS: '60',
      RELAY_MEDIA_LRU_CAP: '3',
      RELAY_MEDIA_ALLOWED_ROOTS: '/a:/b/c/',
      RELAY_MEDIA_STRICT_SANDBOX: '1',
      SVC_WORKSPACE: '/work/space',
    }).media;
    expect(m).toMatchObject({
      maxSizeBytes: 524_288,
      ttlSeconds: 60,
      lruCap: 3,
      allowedRoots: ['/a', '/b/c'],
      strictSandbox: true,
      workspace: '/work/space',
    });
  });

  it('the strict sandbox is a flag like every other (config-env.ts): 1, true, yes, on turn it on; anything unknown is refused', () => {
    expect(loadConfig({ ...base, RELAY_MEDIA_STRICT_SANDBOX: '0' }).media.strictSandbox).toBe(false);
    expect(loadConfig({ ...base, RELAY_MEDIA_STRICT_SANDBOX: 'off' }).media.strictSandbox).toBe(false);
    expect(loadConfig({ ...base, RELAY_MEDIA_STRICT_SANDBOX: 'yes' }).media.strictSandbox).toBe(true);
    expect(() => loadConfig({ ...base, RELAY_MEDIA_STRICT_SANDBOX: 'strict' })).toThrow(/RELAY_MEDIA_STRICT_SANDBOX must be 1, true, yes or on/);
  });

  it.each([
    ['RELAY_MEDIA_MAX_SIZE_MB', '0'],
    ['RELAY_MEDIA_MAX_SIZE_MB', 'lots'],
    ['RELAY_MEDIA_TTL_SECONDS', '1.5'],
    ['RELAY_MEDIA_TTL_SECONDS', '-1'],
    ['RELAY_MEDIA_LRU_CAP', '0'],
    ['RELAY_MEDIA_ALLOWED_ROOTS', 'relative/dir'],
    ['SVC_WORKSPACE', 'relative'],
  ])('refuses %s=%s with a message naming it', (name, value) => {
    expect(() => loadConfig({ ...base, [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, [name]: value })).toThrow(name);
  });
});
