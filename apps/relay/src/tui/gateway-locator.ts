import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RelayConfig } from '../common/config/relay-config';
import { splitCommandLine } from '../common/command-line';

/** How one TUI gateway is started: argv without a shell, its working directory and extra environment. */
export type GatewayLaunch = {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** `command` (RELAY_TUI_COMMAND) or `agent` (the agent's checkout, found without configuration). */
  source: 'command' | 'agent';
};

/** What a client is told when there is no gateway (no paths: they are the operator's business, logged). */
export const NOT_CONFIGURED_MESSAGE =
  'no TUI gateway on this relay host: install the agent (its checkout with the tui_gateway package in ~/.svc/svc-agent, ' +
  'or point SVC_PYTHON_SRC_ROOT at it) or set RELAY_TUI_COMMAND; `shell` and `sessions` work without one';

/** The agent checkout holds the `tui_gateway` package with an `entry` module. */
export function hasTuiGateway(root: string): boolean {
  return fs.existsSync(path.join(root, 'tui_gateway', 'entry.py')) || fs.existsSync(path.join(root, 'tui_gateway', 'entry', '__init__.py'));
}

function pythonFor(root: string, configured: string | null): string {
  if (configured) return configured;
  for (const rel of ['.venv/bin/python', '.venv/bin/python3', 'venv/bin/python', 'venv/bin/python3']) {
    const p = path.join(root, rel);
    if (fs.existsSync(p)) return p;
  }
  return 'python3';
}

/**
 * The gateway to start for a `tui.attach`, looked up at each attach (installing the agent needs no relay
 * restart): RELAY_TUI_COMMAND when set, else the first agent checkout of `tuiAgent.roots` that holds
 * `tui_gateway`, run as `<python> -m tui_gateway.entry` with the checkout first on PYTHONPATH. Null: none.
 */
export function locateGateway(config: Pick<RelayConfig, 'tuiCommand' | 'tuiAgent'>, base: NodeJS.ProcessEnv = process.env): GatewayLaunch | null {
  if (config.tuiCommand) {
    const [file, ...args] = splitCommandLine(config.tuiCommand);
    const home = os.homedir();
    return { file, args, cwd: fs.existsSync(home) ? home : '/', env: {}, source: 'command' };
  }
  const root = config.tuiAgent.roots.find((r) => hasTuiGateway(r));
  if (!root) return null;
  const python = pythonFor(root, config.tuiAgent.python);
  const cwd = config.tuiAgent.cwd && fs.existsSync(config.tuiAgent.cwd) ? config.tuiAgent.cwd : root;
  const pythonPath = base.PYTHONPATH?.trim() ? `${root}${path.delimiter}${base.PYTHONPATH.trim()}` : root;
  return {
    file: python,
    args: ['-m', 'tui_gateway.entry'],
    cwd,
    // The names the agent's gateway reads (both brand spellings).
    env: {
      PYTHONPATH: pythonPath,
      SVC_PYTHON_SRC_ROOT: root,
      HERMES_PYTHON_SRC_ROOT: root,
      HERMES_PYTHON: python,
      HERMES_CWD: cwd,
    },
    source: 'agent',
  };
}
