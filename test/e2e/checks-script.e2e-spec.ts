import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

// scripts/checks.js: `npm test`'s lint, type-checks and build, side by side.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { runChecks, JOBS, LANES } = require('../../scripts/checks.js') as {
  runChecks: (lanes: Job[][], opts: { cwd?: string; write?: (s: string) => void }) => Promise<boolean>;
  JOBS: Job[];
  LANES: string[][];
};
type Job = { name: string; steps: string[][] };

/** A node step that meets its partner: it writes its own file, then waits (at most 15 s) for the partner's. */
const meet = (dir: string, me: string, partner: string, code = 0): string[] => [
  process.execPath,
  '-e',
  `const fs=require('fs'),p=require('path');fs.writeFileSync(p.join(${JSON.stringify(dir)},${JSON.stringify(me)}),'');` +
    `const end=Date.now()+15000;const t=setInterval(()=>{if(fs.existsSync(p.join(${JSON.stringify(dir)},${JSON.stringify(partner)}))){` +
    `console.log('${me} met ${partner}');process.stderr.write('${me} line 2\\n');clearInterval(t);process.exit(${code})}` +
    `if(Date.now()>end){console.log('${me} alone');process.exit(9)}},10);`,
];

describe('scripts/checks.js', () => {
  it('runs the lanes side by side, prints each job whole, and fails when one failed (after all ended; the lane goes on)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-checks-'));
    let printed = '';
    const ok = await runChecks(
      [
        [{ name: 'first', steps: [meet(dir, 'a', 'b')] }],
        [
          { name: 'second', steps: [meet(dir, 'b', 'a', 3), [process.execPath, '-e', 'console.log("never run")']] },
          { name: 'third', steps: [[process.execPath, '-e', 'console.log("third ran")']] },
        ],
      ],
      { cwd: dir, write: (s) => (printed += s) },
    );
    expect(ok).toBe(false);
    // Each met the other: they ran at the same time (one after the other, the first would wait alone and exit 9).
    expect(printed).toContain('── first: passed');
    expect(printed).toContain('a met b');
    expect(printed).toMatch(/── second: FAILED \(exit 3\)[^\n]*\n\$ node -e [^\n]*\nb met a\nb line 2\n/);
    // A failed step ends its job: the next step is not run.
    expect(printed).not.toContain('never run');
    // The next job of the lane still runs, after the failed one.
    expect(printed.indexOf('── third: passed')).toBeGreaterThan(printed.indexOf('── second: FAILED'));
    expect(printed).toContain('third ran');
    const summary = printed.slice(printed.lastIndexOf('checks: '));
    for (const part of [/first ok \d+ s/, /second FAILED \d+ s/, /third ok \d+ s/]) expect(summary).toMatch(part);
  });

  it('passes when every job passed, and a command that cannot start is a failure, not a hang', async () => {
    let printed = '';
    expect(await runChecks([[{ name: 'fine', steps: [[process.execPath, '-e', '']] }]], { write: (s) => (printed += s) })).toBe(true);
    expect(await runChecks([[{ name: 'missing', steps: [['/nonexistent/tool']] }]], { write: (s) => (printed += s) })).toBe(false);
    expect(printed).toMatch(/── missing: FAILED \(exit 127\)/);
  });

  it("npm test's jobs are the ones the README names: eslint, prettier, both type-checks, the build", () => {
    expect(JOBS.map((j) => j.name)).toEqual(['eslint', 'prettier', 'check', 'build']);
    expect(LANES).toEqual([['eslint'], ['prettier', 'check', 'build']]);
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '../../package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.test).toBe('node scripts/checks.js && jest');
    expect(JOBS.find((j) => j.name === 'check')!.steps.map((s) => s.slice(1).join(' '))).toEqual([
      '--noEmit -p tsconfig.json',
      '--noEmit -p apps/console/tsconfig.json',
    ]);
  });
});
