import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { svc } from '../support/cli';
import { Phone } from '../support/harness';
import { BIN, ensureBuilt, ROOT, startRelayProcess, type SvcProcess } from '../support/dist';
import { describeWith } from '../support/requires';
import { Screen } from '../support/terminal-screen';

/**
 * The relay and a phone's shell under what `svc relay service print` asks of systemd (issue 37.1), where no
 * systemd runs as PID 1: test/fixtures/service-sandbox.sh makes the mount namespace (ProtectSystem=strict
 * with only the home writable, PrivateTmp, PrivateDevices) and drops to an unprivileged user with
 * NoNewPrivileges and an empty bounding set; test/fixtures/service-seccomp.py loads the printed unit's own
 * SystemCallFilter= and RestrictAddressFamilies= with libseccomp. A real relay process starts under both, a phone opens a
 * real pty shell through it, and the shell reports what it may and may not do. Needs root (CI runs as root).
 */
const SANDBOX = path.join(ROOT, 'test/fixtures/service-sandbox.sh');
const SECCOMP = path.join(ROOT, 'test/fixtures/service-seccomp.py');
const PYTHON = '/usr/bin/python3';

function lacking(): string | null {
  if (process.getuid?.() !== 0) return 'needs root, to make mount namespaces and drop privileges as systemd does';
  for (const [bin, pkg] of [
    ['unshare', 'util-linux'],
    ['setpriv', 'util-linux'],
    ['systemd-analyze', 'systemd'],
    [PYTHON, 'python3'],
  ])
    if (spawnSync(bin, ['--version']).error) return `${bin} is missing: apt-get install -y ${pkg}`;
  const probe = spawnSync(SANDBOX, ['/', 'root', 'true'], { encoding: 'utf8' });
  if (probe.status !== 0) return `cannot make a mount namespace here: ${probe.stderr.trim()}`;
  return null;
}

/** The shell's own account of its limits: one `key=value` line per probe, between two markers. */
const PROBES = (home: string, hostTmpFile: string) =>
  [
    'echo BEGIN-$((1+1))',
    `echo "uid=$(id -u)"`,
    `grep -E '^(NoNewPrivs|CapBnd|CapEff|Seccomp):' /proc/self/status | tr -d ' \\t' | tr ':' '='`,
    `touch /usr/svc-probe 2>/dev/null && echo usr=writable || echo usr=read-only`,
    `touch ${home}/shell-probe && echo home=writable || echo home=read-only`,
    `test -e ${hostTmpFile} && echo tmp=shared || echo tmp=private`,
    `echo "dev=$(ls /dev | tr '\\n' ' ')"`,
    // Node lists the machine's addresses (the pairing QR's LAN address) through netlink.
    `${process.execPath} -e 'require("os").networkInterfaces()' 2>/dev/null && echo interfaces=listed || echo interfaces=refused`,
    `nice -n 1 true 2>&1 | grep -q 'cannot set niceness' && echo nice=refused || echo nice=allowed`,
    'echo END-$((2+2))',
  ].join('; ') + '\r';

describeWith(lacking(), 'the relay under the service unit\u2019s restrictions, without systemd (issue 37.1)', () => {
  jest.setTimeout(60_000);
  // Not under /tmp: the sandbox gives the relay a /tmp of its own, as PrivateTmp= does.
  const home = fs.mkdtempSync(path.join(ROOT, 'test-results', 'service-home-'));
  const hostTmpFile = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-host-tmp-'));
  const unitFile = `${home}.service`;
  let relay: SvcProcess & { url: string };
  let user = 'nobody';

  beforeAll(async () => {
    ensureBuilt();
    fs.mkdirSync(path.join(ROOT, 'test-results'), { recursive: true });
    // The relay runs as nobody when nobody can read this checkout (a clone under /root cannot be): else as
    // root, still with no capabilities and no new privileges, as `User=root` with the unit's other settings.
    const readable = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'test', '-r', BIN]).status === 0;
    if (readable) fs.chownSync(home, 65534, 65534);
    else user = 'root';
    const unit = await svc(['relay', 'service', 'print', '--user', user, '--home', home]);
    // What service-sandbox.sh does by hand must be what the unit asks; the system calls come from the unit itself.
    for (const setting of [
      'ProtectSystem=strict',
      `ReadWritePaths=${home}`,
      'PrivateTmp=yes',
      'PrivateDevices=yes',
      'NoNewPrivileges=yes',
      'CapabilityBoundingSet=',
      'SystemCallErrorNumber=EPERM',
    ])
      expect(unit.stdout).toContain(`\n${setting}\n`);
    fs.writeFileSync(unitFile, unit.stdout, { mode: 0o644 });
    relay = await startRelayProcess(
      home,
      { RELAY_PAIRING_CODE: 'SBX123', RELAY_TERMINAL_SHELL: path.join(ROOT, 'test/fixtures/bash-norc') },
      [],
      [SANDBOX, home, user, PYTHON, SECCOMP, unitFile, '--'],
    );
  }, 180_000); // ensureBuilt may build dist/ first (npm test has built it already)
  afterAll(async () => {
    relay?.child.kill('SIGTERM');
    await relay?.exited;
    fs.rmSync(home, { recursive: true, force: true });
    fs.rmSync(unitFile, { force: true });
    fs.rmSync(hostTmpFile, { recursive: true, force: true });
  });

  it('starts, writes its log in the home, and a phone opens a shell that stays inside the unit\u2019s limits', async () => {
    expect((await fetch(`${relay.url}/health`)).status).toBe(200);
    expect(fs.readdirSync(path.join(home, 'relay', 'events')).some((f) => f.endsWith('.jsonl'))).toBe(true);

    const phone = await Phone.connect(relay.url);
    const ok = await phone.auth({ pairing_code: 'SBX123', device_name: 'Sandbox phone', device_id: 'dev-sandbox' });
    expect(ok.type).toBe('auth.ok');
    const screen = new Screen(phone);
    phone.send('terminal', 'terminal.attach', { cols: 200, rows: 50 }, 'attach');
    expect((await phone.next((f) => f.id === 'attach')).type).toBe('terminal.attached');
    phone.send('terminal', 'terminal.input', { data: PROBES(home, hostTmpFile) });
    await screen.waitFor(/END-4/, 'main', 20_000);
    const out = screen.of();
    const said = Object.fromEntries([...out.slice(out.lastIndexOf('BEGIN-2')).matchAll(/^(\w+)=(.*?)\s*$/gm)].map((m) => [m[1], m[2]]));
    expect(said).toMatchObject({
      uid: user === 'nobody' ? '65534' : '0',
      NoNewPrivs: '1',
      CapBnd: '0000000000000000',
      CapEff: '0000000000000000',
      Seccomp: '2',
      usr: 'read-only',
      home: 'writable',
      tmp: 'private',
      nice: 'refused',
      interfaces: 'listed',
    });
    expect(said.dev.split(' ').filter(Boolean).sort()).toEqual(['full', 'null', 'ptmx', 'pts', 'random', 'shm', 'tty', 'urandom', 'zero']);
    phone.send('terminal', 'terminal.kill', {}, 'kill');
    await phone.next((f) => f.id === 'kill');
    phone.close();
  });

  it('stops cleanly on SIGTERM, well within the unit\u2019s TimeoutStopSec', async () => {
    relay.child.kill('SIGTERM');
    expect(await relay.exited).toEqual({ code: 0, signal: null });
    expect(relay.stderr()).toContain('stopped');
  });
});

/** Why the unit leaves MemoryDenyWriteExecute= off: Node's JIT dies under it (Linux 6.3's PR_SET_MDWE, what systemd 253 uses). */
const [major, minor] = os.release().split('.').map(Number);
const noMdwe =
  major > 6 || (major === 6 && minor >= 3)
    ? fs.existsSync(PYTHON)
      ? null
      : `${PYTHON} is missing`
    : `Linux ${os.release()} has no PR_SET_MDWE (6.3)`;
describeWith(noMdwe, 'MemoryDenyWriteExecute= and Node', () => {
  it('node runs under the unit\u2019s system-call filter, and dies under MemoryDenyWriteExecute', async () => {
    const script = 'console.log("ran", 6 * 7)';
    const unitFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-mdwe-')), 'svc-relay.service');
    fs.writeFileSync(unitFile, (await svc(['relay', 'service', 'print', '--user', 'root', '--home', '/var/lib/svc-relay'])).stdout);
    const filtered = spawnSync('setpriv', ['--no-new-privs', PYTHON, SECCOMP, unitFile, '--', process.execPath, '-e', script], { encoding: 'utf8' });
    expect(filtered.stdout).toBe('ran 42\n');
    const mdwe = spawnSync(PYTHON, [SECCOMP, '--mdwe', '--', process.execPath, '-e', script], { encoding: 'utf8' });
    expect(mdwe.stdout).toBe('');
    expect(mdwe.status === 0 && mdwe.signal === null).toBe(false);
    expect(mdwe.stderr).toMatch(/Check failed|Fatal/);
    fs.rmSync(path.dirname(unitFile), { recursive: true, force: true });
  });
});
