import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../common/config/config';
import { hasTuiGateway, locateGateway, NOT_CONFIGURED_MESSAGE } from './gateway-locator';

const made: string[] = [];
const tempDir = (prefix: string): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

function checkout(opts: { venv?: boolean; packageEntry?: boolean } = {}): string {
  const root = tempDir('svc-agent-');
  const pkg = path.join(root, 'tui_gateway');
  if (opts.packageEntry) {
    fs.mkdirSync(path.join(pkg, 'entry'), { recursive: true });
    fs.writeFileSync(path.join(pkg, 'entry', '__init__.py'), '');
  } else {
    fs.mkdirSync(pkg, { recursive: true });
    fs.writeFileSync(path.join(pkg, 'entry.py'), '');
  }
  if (opts.venv) {
    fs.mkdirSync(path.join(root, '.venv', 'bin'), { recursive: true });
    fs.writeFileSync(path.join(root, '.venv', 'bin', 'python3'), '');
  }
  return root;
}

describe('locateGateway', () => {
  const empty = () => tempDir('svc-home-');

  it('defaults: <SVC_HOME>/svc-agent, then ~/.hermes/hermes-agent (HOME from the environment)', () => {
    const config = loadConfig({ SVC_HOME: '/srv/svc', HOME: '/home/u' });
    expect(config.tuiAgent).toEqual({ roots: ['/srv/svc/svc-agent', '/home/u/.hermes/hermes-agent'], python: null, cwd: null });
    expect(loadConfig({ SVC_HOME: '/srv/svc', HERMES_PYTHON_SRC_ROOT: '/opt/agent', PYTHON: '/usr/bin/python3.12' }).tuiAgent).toEqual({
      roots: ['/opt/agent'],
      python: '/usr/bin/python3.12',
      cwd: null,
    });
    expect(loadConfig({ SVC_HOME: '/srv/svc', SVC_PYTHON_SRC_ROOT: '/a', HERMES_PYTHON_SRC_ROOT: '/b' }).tuiAgent.roots).toEqual(['/a']);
  });

  it('none: null (no RELAY_TUI_COMMAND, no checkout holding tui_gateway)', () => {
    expect(locateGateway({ tuiCommand: null, tuiAgent: { roots: [empty(), '/nonexistent/agent'], python: null, cwd: null } })).toBeNull();
    expect(NOT_CONFIGURED_MESSAGE).toMatch(/RELAY_TUI_COMMAND/);
    expect(NOT_CONFIGURED_MESSAGE).not.toMatch(/\/home|\/root|\/tmp/);
  });

  it('RELAY_TUI_COMMAND wins, split like a shell would', () => {
    const launch = locateGateway({ tuiCommand: "/usr/bin/gw --flag 'two words'", tuiAgent: { roots: [checkout()], python: null, cwd: null } });
    expect(launch).toMatchObject({ file: '/usr/bin/gw', args: ['--flag', 'two words'], source: 'command', env: {} });
  });

  it('the first checkout with tui_gateway: its venv python, -m tui_gateway.entry, checkout first on PYTHONPATH', () => {
    const root = checkout({ venv: true });
    const launch = locateGateway({ tuiCommand: null, tuiAgent: { roots: [empty(), root], python: null, cwd: null } }, { PYTHONPATH: '/x:/y' });
    expect(launch).toEqual({
      file: path.join(root, '.venv', 'bin', 'python3'),
      args: ['-m', 'tui_gateway.entry'],
      cwd: root,
      source: 'agent',
      env: {
        PYTHONPATH: `${root}${path.delimiter}/x:/y`,
        SVC_PYTHON_SRC_ROOT: root,
        HERMES_PYTHON_SRC_ROOT: root,
        HERMES_PYTHON: path.join(root, '.venv', 'bin', 'python3'),
        HERMES_CWD: root,
      },
    });
  });

  it('a configured python and working directory are used; an entry package counts too', () => {
    const root = checkout({ packageEntry: true, venv: true });
    expect(hasTuiGateway(root)).toBe(true);
    const cwd = empty();
    const launch = locateGateway({ tuiCommand: null, tuiAgent: { roots: [root], python: '/opt/py/bin/python', cwd } }, {});
    expect(launch).toMatchObject({ file: '/opt/py/bin/python', cwd, env: { PYTHONPATH: root, HERMES_CWD: cwd } });
    // Without a venv or a configured one: python3 from PATH.
    expect(locateGateway({ tuiCommand: null, tuiAgent: { roots: [checkout()], python: null, cwd: null } })?.file).toBe('python3');
  });
});
