import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ensureBuilt, ROOT } from '../support/dist';

/**
 * The release package (issue 37.2): scripts/release-check.js packs the built tree, installs the tarball
 * with `npm install -g` into a temporary prefix (offline when npm's cache holds the dependencies), starts
 * the installed `svc relay start` from an empty directory and checks /health, /console/ and its script, a
 * phone's pty shell (node-pty from the install) and better-sqlite3. Here npm skips the install scripts and
 * the two native modules' compiled files come from this checkout (compiling them takes minutes); .ci/run
 * runs the same check with the install scripts, as a target machine does.
 */
jest.setTimeout(240_000);

describe('the release package (issue 37.2)', () => {
  it('installs from its tarball with only its dependencies and runs with the console served', () => {
    ensureBuilt();
    if (!fs.existsSync(path.join(ROOT, 'apps/console/dist/index.html')))
      execFileSync('npm', ['run', 'build:console'], { cwd: ROOT, stdio: 'pipe', timeout: 180_000 });
    const run = spawnSync(process.execPath, [path.join(ROOT, 'scripts/release-check.js'), '--native-from', ROOT, '--json'], {
      encoding: 'utf8',
      timeout: 230_000,
    });
    const report = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}');
    expect(report.error).toBeUndefined();
    expect(run.status).toBe(0);
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(report).toMatchObject({
      ok: true,
      pack: { version: pkg.version },
      probe: { health: 'ok', console: 200, asset: expect.stringMatching(/^\/console\/assets\/.+\.js$/) },
      shell: 'pty-42',
      sqlite: '42',
    });
    // Measured 1.07 MB (512 files): source maps or sources shipped by mistake would double it.
    expect(report.pack.size).toBeLessThan(2_000_000);
  });

  it('records the licence: package.json, LICENSE and README agree on MIT', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.private).toBeUndefined();
    expect(pkg.license).toBe('MIT');
    expect(fs.readFileSync(path.join(ROOT, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n/);
    expect(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8')).toMatch(/## Licence\n\nMIT/);
  });
});
