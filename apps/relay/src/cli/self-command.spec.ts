import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { selfCommand } from './self-command';

describe('how the CLI names itself in its hints', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-self-'));
  const checkout = path.join(root, 'relay');
  const bin = path.join(checkout, 'bin', 'svc');
  fs.mkdirSync(path.dirname(bin), { recursive: true });
  fs.writeFileSync(bin, '#!/usr/bin/env node\n', { mode: 0o755 });
  const linked = path.join(root, 'global-bin');
  fs.mkdirSync(linked);
  fs.symlinkSync(bin, path.join(linked, 'svc'));
  const other = path.join(root, 'other-bin');
  fs.mkdirSync(other);
  fs.writeFileSync(path.join(other, 'svc'), '#!/bin/sh\n', { mode: 0o755 });

  it('a fresh clone, started from its directory: ./bin/svc (nothing put svc on PATH)', () => {
    expect(selfCommand({ PATH: '/usr/bin:/bin' }, bin, checkout)).toBe('./bin/svc');
  });

  it('linked onto PATH (npm link, a global install): svc', () => {
    expect(selfCommand({ PATH: `/usr/bin:${linked}` }, bin, checkout)).toBe('svc');
  });

  it('another program called svc on PATH does not count', () => {
    expect(selfCommand({ PATH: other }, bin, checkout)).toBe('./bin/svc');
  });

  it('started from elsewhere: its full path', () => {
    expect(selfCommand({ PATH: '' }, bin, other)).toBe(bin);
  });

  it('not started as svc (tests, node dist/...): the documented name', () => {
    expect(selfCommand({ PATH: '' }, path.join(checkout, 'dist', 'main.js'), checkout)).toBe('svc');
    expect(selfCommand({}, undefined, checkout)).toBe('svc');
  });
});
