import { checkMediaPath, isWithin, type MediaPolicyContext } from './media-policy';

const ctx: MediaPolicyContext = {
  home: '/home/ada',
  svcHome: '/home/ada/.svc',
  workspace: '/home/ada/.svc/workspace',
  tmpDir: '/tmp',
  allowedRoots: ['/srv/media'],
  strictSandbox: false,
};
const strict = { ...ctx, strictSandbox: true };
const ok = (p: string, c = ctx) => checkMediaPath(p, c).ok;
const code = (p: string, c = ctx) => {
  const v = checkMediaPath(p, c);
  return v.ok ? 'ok' : v.code;
};

describe('media policy', () => {
  it('isWithin compares whole segments', () => {
    expect(isWithin('/etc', '/etc')).toBe(true);
    expect(isWithin('/etc/passwd', '/etc')).toBe(true);
    expect(isWithin('/etcetera/x', '/etc')).toBe(false);
    expect(isWithin('/anything', '/')).toBe(true);
  });

  it.each([
    '/etc/passwd',
    '/etc',
    '/proc/self/environ',
    '/sys/class',
    '/dev/sda',
    '/boot/vmlinuz',
    '/var/log/syslog',
    '/var/lib/docker/x',
    '/var/run/docker.sock',
    '/run/secrets/x',
  ])('always denies system path %s, even inside an allowed root', (p) => {
    expect(code(p)).toBe('media.denied_path');
    expect(code(p, { ...strict, allowedRoots: ['/'] })).toBe('media.denied_path');
  });

  it('allows look-alike names next to system paths', () => {
    expect(ok('/etcetera/file.txt')).toBe(true);
    expect(ok('/var/www/index.html')).toBe(true);
    expect(ok('/devices.txt')).toBe(true);
  });

  it.each([
    '.ssh/id_ed25519',
    '.aws/credentials',
    '.gnupg/pubring.kbx',
    '.kube/config',
    '.docker/config.json',
    '.config/gh/hosts.yml',
    '.azure/x',
    '.gcloud/x',
    '.netrc',
    '.git-credentials',
    '.pgpass',
    '.npmrc',
    '.pypirc',
  ])('denies the credential entry ~/%s', (rel) => {
    expect(code(`/home/ada/${rel}`)).toBe('media.denied_path');
    expect(code(`/home/bob/${rel}`)).toBe('media.denied_path');
  });

  it('does not name the real path in a refusal (it may be a symlink target)', () => {
    const v = checkMediaPath('/home/ada/.ssh/id_rsa', ctx);
    expect(v.ok).toBe(false);
    if (!v.ok) {
      expect(v.reason).toContain('~/.ssh');
      expect(v.reason).not.toContain('/home/ada');
    }
  });

  it('allows the rest of a home directory, and credential-like names deeper down', () => {
    expect(ok('/home/ada/Pictures/cat.png')).toBe(true);
    expect(ok('/home/ada/project/.config/settings.json')).toBe(true);
    expect(ok('/home/ada/.sshx')).toBe(true);
  });

  it("/root is denied unless it is the relay user's home, and then only its credential folders are", () => {
    expect(code('/root/notes.txt')).toBe('media.denied_path');
    const rootUser = { ...ctx, home: '/root', svcHome: '/root/.svc', workspace: '/root/.svc/workspace' };
    expect(code('/root/notes.txt', rootUser)).toBe('ok');
    expect(code('/root/.ssh/authorized_keys', rootUser)).toBe('media.denied_path');
    expect(code('/root/.aws/credentials', rootUser)).toBe('media.denied_path');
  });

  it("denies the relay's own home (secrets, log, env) but serves its workspace", () => {
    expect(code('/home/ada/.svc/relay/secret.key')).toBe('media.denied_path');
    expect(code('/home/ada/.svc/relay/events/00000001.jsonl')).toBe('media.denied_path');
    expect(code('/home/ada/.svc/.env')).toBe('media.denied_path');
    expect(code('/home/ada/.svc/workspace/out/chart.png')).toBe('ok');
    expect(code('/home/ada/.svc/workspace/out/chart.png', strict)).toBe('ok');
  });

  it('strict sandbox: only tmp, workspace and allowed roots', () => {
    expect(code('/home/ada/Pictures/cat.png', strict)).toBe('media.outside_sandbox');
    expect(code('/tmp/shot.png', strict)).toBe('ok');
    expect(code('/srv/media/a.mp4', strict)).toBe('ok');
    expect(code('/srv/mediafiles/a.mp4', strict)).toBe('media.outside_sandbox');
    expect(code('/opt/x', strict)).toBe('media.outside_sandbox');
    expect(code('/opt/x')).toBe('ok');
  });

  it('rejects non-absolute and NUL-carrying paths', () => {
    expect(code('relative/x')).toBe('media.bad_path');
    expect(code('/tmp/a\0b')).toBe('media.bad_path');
  });

  it('a home of / does not make everything a home', () => {
    expect(ok('/srv/a.png', { ...ctx, home: '/' })).toBe(true);
  });
});
