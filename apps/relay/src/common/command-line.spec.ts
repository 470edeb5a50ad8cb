import { splitCommandLine } from './command-line';

describe('splitCommandLine', () => {
  it.each([
    ['svc tui-gateway --json', ['svc', 'tui-gateway', '--json']],
    ['  a   b\tc  ', ['a', 'b', 'c']],
    ["node '/opt/my app/gw.js' --name 'x y'", ['node', '/opt/my app/gw.js', '--name', 'x y']],
    ['say "he said \\"hi\\" to \\\\ you" $HOME', ['say', 'he said "hi" to \\ you', '$HOME']],
    ['a\\ b c', ['a b', 'c']],
    ["''", ['']],
    ['x""y', ['xy']],
    ['"a \\n b"', ['a \\n b']],
  ])('%s', (line, words) => {
    expect(splitCommandLine(line)).toEqual(words);
  });

  it.each([["it's"], ['"open'], ['trail\\']])('refuses %s', (line) => {
    expect(() => splitCommandLine(line)).toThrow();
  });
});
