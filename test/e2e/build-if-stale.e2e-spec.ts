import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildIfStale, PARTS } from '../../scripts/build-if-stale';

/**
 * `npm start` builds only what changed (issue 36.6): scripts/build-if-stale.js run on a checkout whose
 * tsc, tsc-alias and vite are stand-ins that log each run and write the part's output, so each build it
 * starts is a real process that can be counted.
 */
describe('npm start builds only what changed', () => {
  let root: string;
  let runs: string;
  const built = () => (fs.existsSync(runs) ? fs.readFileSync(runs, 'utf8').trim().split('\n') : []);
  const build = () => {
    fs.rmSync(runs, { force: true });
    const said: string[] = [];
    buildIfStale(root, { log: (s) => said.push(s) });
    return { tools: built(), said: said.join('\n') };
  };
  const touch = (rel: string) => {
    const t = new Date(Date.now() + 5_000);
    fs.utimesSync(path.join(root, rel), t, t);
  };

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-build-if-stale-'));
    runs = path.join(root, 'runs.log');
    const write = (rel: string, text: string, mode = 0o644) => {
      fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      fs.writeFileSync(path.join(root, rel), text, { mode });
    };
    for (const f of ['apps/relay/src/cli/main.ts', 'apps/relay/src/cli/main.spec.ts', 'apps/phone-sim/src/sim.ts', 'libs/events/src/event.ts'])
      write(f, '// source\n');
    write('apps/console/src/main.tsx', '// console\n');
    write('apps/console/index.html', '<html></html>\n');
    write('tsconfig.json', '{}\n');
    write('tsconfig.build.json', '{}\n');
    write('package.json', '{}\n');
    write('scripts/copy-assets.js', '// asset step\n');
    const stub = (name: string, output: string) =>
      write(
        `node_modules/.bin/${name}`,
        `#!/bin/sh\necho ${name} >> '${runs}'\nmkdir -p '${path.dirname(path.join(root, output))}' && touch '${path.join(root, output)}'\n`,
        0o755,
      );
    stub('tsc', PARTS.relay.output);
    stub('tsc-alias', PARTS.relay.output);
    stub('vite', PARTS.console.output);
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('first start builds both; a start with nothing changed builds nothing and says so', () => {
    expect(build().tools).toEqual(['tsc', 'tsc-alias', 'vite']);
    const again = build();
    expect(again.tools).toEqual([]);
    expect(again.said).toBe('build: nothing changed since the last build; skipped');
  });

  it('a touched relay source rebuilds the relay only; a console source the console only; libs both', () => {
    build();
    touch('apps/relay/src/cli/main.ts');
    expect(build()).toEqual({ tools: ['tsc', 'tsc-alias'], said: 'build: relay changed; building relay' });
    touch('apps/console/src/main.tsx');
    expect(build().tools).toEqual(['vite']);
    touch('libs/events/src/event.ts');
    expect(build().tools).toEqual(['tsc', 'tsc-alias', 'vite']);
    touch('package.json');
    expect(build().tools).toEqual(['tsc', 'tsc-alias', 'vite']);
    expect(build().tools).toEqual([]);
  });

  it('a new or deleted file, or a missing output, rebuilds; a unit spec does not', () => {
    build();
    fs.writeFileSync(path.join(root, 'apps/relay/src/cli/new.ts'), '// new\n');
    expect(build().tools).toEqual(['tsc', 'tsc-alias']);
    fs.rmSync(path.join(root, 'apps/relay/src/cli/new.ts'));
    expect(build().tools).toEqual(['tsc', 'tsc-alias']);
    fs.rmSync(path.join(root, PARTS.console.output));
    expect(build().tools).toEqual(['vite']);
    touch('apps/relay/src/cli/main.spec.ts');
    expect(build().tools).toEqual([]);
  });

  it('a failed build records nothing: the next start tries again', () => {
    build();
    fs.writeFileSync(path.join(root, 'node_modules/.bin/tsc'), '#!/bin/sh\nexit 2\n', { mode: 0o755 });
    touch('apps/relay/src/cli/main.ts');
    expect(() => buildIfStale(root, { log: () => undefined })).toThrow();
    expect(() => buildIfStale(root, { log: () => undefined })).toThrow();
  });
});
