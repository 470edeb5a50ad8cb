import { cpuMs } from '../../../../../test/support/timing';
import { editYamlLists, editYamlSection, yamlScalar } from './config-yaml-edit';
import { configTextExceeds, MAX_CONFIG_BYTES, MAX_CONFIG_TOKENS, parseConfigYaml } from './config-yaml-parse';

/** `unit(i)` repeated as often as the bounds allow: the largest config of that shape the relay parses. */
function largest(unit: (i: number) => string): string {
  const make = (n: number) => Array.from({ length: n }, (_, i) => unit(i)).join('');
  let lo = 0;
  let hi = MAX_CONFIG_TOKENS + 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (configTextExceeds(make(mid))) hi = mid;
    else lo = mid;
  }
  return make(lo);
}

describe('config YAML bounds', () => {
  it('refuses the 64,000-key mapping (629 KB, 49 s a parse before) before parsing, at once', () => {
    let huge = '';
    for (let i = 0; i < 64_000; i++) huge += `key_${i}: value\n`;
    let err: Error | null = null;
    expect(cpuMs(() => (err = configTextExceeds(huge)))).toBeLessThan(100);
    expect(err).toMatchObject({ problem: 'too_large' });
    // Under the byte cap but past the structure bound: refused by the same look.
    const many = 'k: 1\n'.repeat(MAX_CONFIG_TOKENS);
    expect(Buffer.byteLength(many)).toBeLessThan(MAX_CONFIG_BYTES);
    expect(configTextExceeds(many)).toMatchObject({ problem: 'too_large' });
    expect(() => parseConfigYaml(many)).toThrow(`more than ${MAX_CONFIG_TOKENS} lines`);
  });

  it.each([
    ['a block mapping', (i: number) => `key_${i}: value_${i}\n`],
    ['a flow sequence per line', (i: number) => `k${i}: [${i}, ${i}, ${i}]\n`],
    ['nested mappings', (i: number) => `a${i}:\n  b: {c: [1, 2]}\n`],
    ['explicit keys', (i: number) => `? k${i}\n: v\n`],
    ['anchors and aliases', (i: number) => (i === 0 ? 'x: &a [1]\n' : i < 90 ? `y${i}: *a\n` : `z${i}: &z${i} v\n`)],
  ])('parses the largest allowed config of %s quickly', (_, unit) => {
    const text = largest(unit);
    expect(configTextExceeds(text + unit(0).repeat(200))).toMatchObject({ problem: 'too_large' });
    parseConfigYaml(text); // warm
    const ms = cpuMs(() => parseConfigYaml(text));
    // Measured at 120-250 ms of CPU on a loaded two-core machine; 64,000 keys took 49,000 ms before the bounds.
    expect(ms).toBeLessThan(1500);
  });

  it('refuses what would overflow the stack or explode when made into JS, and duplicate keys (checked linearly)', () => {
    for (const [text, why] of [
      ['- '.repeat(1000) + 'x\n', /nests deeper/],
      ['? '.repeat(200) + 'x\n', /nests deeper/],
      ['['.repeat(100) + ']'.repeat(100), /nests deeper/],
      [Array.from({ length: 200 }, (_, i) => ' '.repeat(i) + 'a:').join('\n') + ' 1\n', /nests deeper/],
      ['? [a, b]\n: c\n', /key that is a list or a mapping/],
      ['a: 1\nb: 2\na: 3\n', /the key "a" twice/],
      ['- 1\n- 2\n', /not a YAML mapping/],
      ['a: [unclosed\n', /not valid YAML/],
    ] as const)
      expect(() => parseConfigYaml(text)).toThrow(why);
    expect(parseConfigYaml('').data).toEqual({});
    expect(parseConfigYaml('# only a comment\n').data).toEqual({});
    // 1 and "1" are different keys, as YAML says.
    expect(parseConfigYaml('1: a\n"1": b\n').data).toEqual({ 1: 'b' });
  });
});

describe('editYamlSection: edits in place', () => {
  const operator = [
    '# The operator config. Keep these comments.',
    'model:   gpt-5    # spacing kept',
    'flags:',
    '  telemetry: "yes"   # quoted: PyYAML would read yes as true',
    '  colour: "NO"',
    'big: 12345678901234567890',
    'blob: !!binary |',
    '  R0lGODlhDAAMAIQAAP//9/X17unp5WZmZgAAAOfn515eXvPz7Y6OjuDg4J+fn5',
    'list: [a, b,   c]',
    '',
    'voice_output:',
    '  provider: offline   # which engine',
    '  voice: en-us',
    '',
    '# trailing comment',
    'tail: 1',
    '',
  ].join('\n');

  it('changes a value and adds a key, every other byte as it was', () => {
    const { text } = editYamlSection(operator, 'voice_output', { voice: 'en-gb', sample_rate: 22050 });
    expect(text).toBe(operator.replace('  voice: en-us\n', '  voice: en-gb\n  sample_rate: 22050\n'));
  });

  it('removes keys (a section left empty is {}), adds a missing section at the end, quotes what PyYAML would misread', () => {
    expect(editYamlSection(operator, 'voice_output', { provider: null }).text).toBe(operator.replace('  provider: offline   # which engine\n', ''));
    expect(editYamlSection(operator, 'voice_output', { provider: null, voice: null }).text).toBe(
      operator.replace('voice_output:\n  provider: offline   # which engine\n  voice: en-us\n', 'voice_output: {}\n'),
    );
    expect(editYamlSection(operator, 'realtime_voice', { voice: 'yes', language: 'en' }).text).toBe(
      `${operator}realtime_voice:\n  voice: "yes"\n  language: en\n`,
    );
    expect(editYamlSection(operator, 'realtime_voice', { voice: null }).text).toBe(operator);
    expect(editYamlSection('a: 1', 'voice_output', { voice: 'x' }).text).toBe('a: 1\nvoice_output:\n  voice: x\n');
    expect(editYamlSection('', 'voice_output', { voice: 'x' }).text).toBe('voice_output:\n  voice: x\n');
  });

  it('flow mappings, empty sections and values on their own line', () => {
    expect(editYamlSection('v: {voice: a, rate: 1}\n', 'v', { voice: 'b', rate: null, lang: 'en' }).text).toBe('v: {voice: b, lang: en}\n');
    expect(editYamlSection('v: {}\n', 'v', { voice: 'b' }).text).toBe('v: {voice: b}\n');
    expect(editYamlSection('v:\nw: 1\n', 'v', { voice: 'b' }).text).toBe('v: {voice: b}\nw: 1\n');
    expect(editYamlSection('v:\n  voice: &x a\n  model: !!str 5\n', 'v', { voice: 'b', model: 'm' }).text).toBe('v:\n  voice: b\n  model: m\n');
  });

  it('refuses what it cannot edit in place rather than rewrite the file', () => {
    expect(() => editYamlSection('v: [1]\n', 'v', { voice: 'b' })).toThrow(/v is not a mapping/);
    expect(() => editYamlSection('v:\n  voice: &x a\nw: *x\n', 'v', { voice: 'b' })).toThrow(/edit it by hand/);
    expect(() => editYamlSection('{a: 1}\n', 'v', { voice: 'b' })).toThrow(/not a block mapping/);
    expect(() => editYamlSection('v:\n  voice:\n    nested: 1\n', 'v', { voice: 'b' })).toThrow(/holds a list or a mapping/);
  });

  it('yamlScalar: plain only when both YAML 1.1 and 1.2 read it back as the same string', () => {
    expect(['en-us+f3', 'alloy', 'gpt-4o-mini-tts', 'a.b/c'].map(yamlScalar)).toEqual(['en-us+f3', 'alloy', 'gpt-4o-mini-tts', 'a.b/c']);
    expect(['yes', 'NO', 'on', 'null', '123', '1:30', '2024-01-01', 'a: b', 'Zoë', '😀', 'a"b'].map(yamlScalar)).toEqual([
      '"yes"',
      '"NO"',
      '"on"',
      '"null"',
      '"123"',
      '"1:30"',
      '"2024-01-01"',
      '"a: b"',
      '"Zo\\u00eb"',
      '"\\U0001f600"',
      '"a\\"b"',
    ]);
    expect([22050, true, false].map(yamlScalar)).toEqual(['22050', 'true', 'false']);
    for (const s of ['Zoë', '😀', 'a"b\\c', 'yes']) expect(parseConfigYaml(`k: ${yamlScalar(s)}\n`).data.k).toBe(s);
  });
});

describe('editYamlLists: the relay plugin enabled in place', () => {
  const enable = (text: string) => editYamlLists(text, 'plugins', { enabled: { add: 'svc-relay' }, disabled: { remove: 'svc-relay' } }).text;
  it.each([
    ['no plugins section', 'model: x  # c\n', 'model: x  # c\nplugins:\n  enabled:\n    - svc-relay\n'],
    [
      'a block list',
      'plugins:\n  enabled:\n    - a   # first\n    - b\nz: 1\n',
      'plugins:\n  enabled:\n    - a   # first\n    - b\n    - svc-relay\nz: 1\n',
    ],
    ['a flow list', 'plugins: {enabled: [a], disabled: [x, svc-relay, y]}\n', 'plugins: {enabled: [a, svc-relay], disabled: [x, y]}\n'],
    ['disabled only', 'plugins:\n  disabled:\n  - svc-relay\n', 'plugins:\n  disabled: []\n  enabled:\n    - svc-relay\n'],
    ['an empty plugins', 'plugins:\nbig: 12345678901234567890\n', 'plugins: {enabled: [svc-relay]}\nbig: 12345678901234567890\n'],
    ['an empty list', 'plugins:\n  enabled: []\n', 'plugins:\n  enabled: [svc-relay]\n'],
    ['already there', 'plugins:\n  enabled: [svc-relay]\n', 'plugins:\n  enabled: [svc-relay]\n'],
  ])('%s', (_, before, after) => expect(enable(before)).toBe(after));

  it('refuses lists that are not lists', () => {
    expect(() => enable('plugins:\n  enabled: yes\n')).toThrow(/plugins.enabled is not a list/);
    expect(() => enable('plugins: [a]\n')).toThrow(/plugins is not a mapping/);
  });
});
