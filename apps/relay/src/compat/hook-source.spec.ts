import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { HOOK_MODULE, HOOK_SOURCE_FILE, hookSource, hookVersion } from './hook-source';

/** Debian's python3 (.ci/run installs it): the compatibility hook runs inside the agent's Python. */
const PYTHON = 'python3';

describe('the compatibility hook module: a real Python file', () => {
  it("compiles with Python's own py_compile (syntax errors fail here, not in the agent's API server)", () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-hook-pyc-'));
    try {
      // cfile outside the source tree: no __pycache__ is left beside the module.
      const compile = 'import py_compile, sys\npy_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)';
      execFileSync(PYTHON, ['-c', compile, HOOK_SOURCE_FILE, path.join(out, `${HOOK_MODULE}.pyc`)], { stdio: 'pipe' });
      expect(fs.statSync(path.join(out, `${HOOK_MODULE}.pyc`)).size).toBeGreaterThan(0);
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });

  it('is what install writes, and names its version once in code and once in its docstring, the same', () => {
    expect(hookSource()).toBe(fs.readFileSync(path.join(__dirname, `${HOOK_MODULE}.py`), 'utf8'));
    expect(hookVersion()).toBeGreaterThanOrEqual(2);
    expect(/^"""svc relay compatibility hook \(spec 4\.12\), version (\d+)\.$/m.exec(hookSource())?.[1]).toBe(String(hookVersion()));
  });
});
