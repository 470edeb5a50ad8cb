import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { consoleLine, consoleWhere, isConsoleUrl } from './console-url';
import { loopbackRefusalPage } from './loopback-refusal-page';

describe('where the console is (the start-up line and the log)', () => {
  const built = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-console-built-'));
  fs.writeFileSync(path.join(built, 'index.html'), '<!doctype html>');
  const missing = path.join(os.tmpdir(), 'svc-console-none-here');

  it.each([
    ['0.0.0.0', null, built, { state: 'ready', url: 'http://127.0.0.1:8767/console/' }],
    ['127.0.0.1', {}, built, { state: 'ready', url: 'https://127.0.0.1:8767/console/' }],
    ['::', null, built, { state: 'ready', url: 'http://127.0.0.1:8767/console/' }],
    ['::1', null, built, { state: 'ready', url: 'http://[::1]:8767/console/' }],
    ['localhost', null, missing, { state: 'not_built', url: 'http://localhost:8767/console/' }],
    ['192.168.1.5', null, built, { state: 'unreachable', host: '192.168.1.5' }],
  ])('listening on %s (tls %j)', (host, tls, dir, where) => {
    expect(consoleWhere({ host, tls: tls as never, consoleDir: dir }, 8767)).toEqual(where);
  });

  it('says it in one line, with what to do when it cannot be opened', () => {
    expect(consoleLine({ state: 'ready', url: 'http://127.0.0.1:8767/console/' })).toBe(
      'console http://127.0.0.1:8767/console/ (a browser on this machine, signed in with a one-time link; it answers only on loopback)',
    );
    expect(consoleLine({ state: 'not_built', url: 'http://127.0.0.1:8767/console/' })).toContain('npm run build:console');
    expect(consoleLine({ state: 'unreachable', host: '192.168.1.5' })).toContain('bind 0.0.0.0 or 127.0.0.1');
  });

  it.each([
    ['/console', true],
    ['/console/', true],
    ['/console/api/overview', true],
    ['/console?x', true],
    ['/consoles', false],
    ['/health', false],
  ])('%s is a console URL: %s', (url, yes) => {
    expect(isConsoleUrl(url)).toBe(yes);
  });
});

describe('the page a browser reads when the console refuses it', () => {
  it('escapes the refusal it quotes and names the loopback address and the SSH forward', () => {
    const page = loopbackRefusalPage('a <b>"bad"</b> & \'reason\'', 9000);
    expect(page).toContain('a &lt;b&gt;&quot;bad&quot;&lt;/b&gt; &amp; &#39;reason&#39;');
    expect(page).not.toContain('<b>');
    expect(page).toContain('http://127.0.0.1:9000/console/');
    expect(page).toContain('ssh -L 9000:127.0.0.1:9000 &lt;relay host&gt;');
    expect(page).not.toMatch(/<script|<img|<link|src=/i);
  });
});
