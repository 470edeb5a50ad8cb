import { bestCpuMs, cpuMs, growth } from '../../../../test/support/timing';
import { sanitizeForSpeech, truncateForSpeech } from './speech-text';

/** The regex chain this module replaced (quadratic on `[[[...`): the reference for inputs with no URL or MEDIA marker. */
function previousSanitizer(raw: string): string {
  return (
    raw
      .replace(/```[\s\S]*?```/g, ' ')
      .replace(/MEDIA:\S+/g, ' ')
      .replace(/https?:\/\/\S+/g, ' ')
      .replace(/!\[[^\]]*\]\([^)]*\)/g, ' ')
      // eslint-disable-next-line regexp/no-super-linear-move -- the old pattern under test, run only on short generated strings
      .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
      .replace(/[*_`#>|~]+/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
  );
}

describe('sanitizeForSpeech', () => {
  it.each([
    ['plain text', 'Hello there.', 'Hello there.'],
    ['code fences go', 'Before ```js\nconst x = 1;\n``` after', 'Before after'],
    ['an unbalanced fence is only marks', 'a ``` b', 'a b'],
    ['MEDIA markers go', 'Here MEDIA:/tmp/a.png is the file', 'Here is the file'],
    ['URLs go', 'See https://example.com/x?y=1 and http://a.b', 'See and'],
    ['markdown images go', 'Look ![a chart](/tmp/c.png) here', 'Look here'],
    ['links become their label', 'Read [the docs](/docs/intro) now', 'Read the docs now'],
    ['a link to a URL becomes its label', 'Read [the docs](https://example.com/docs) now', 'Read the docs now'],
    ['an image inside a link goes with it', '[![badge](https://b.example/x.svg)](https://ci.example)', ''],
    ['marks go', '**bold** _it_ `code` # head > quote | t ~x~', 'bold it code head quote t x'],
    ['whitespace collapses', '  a \n\n\t b  ', 'a b'],
    ['brackets that are not links stay', 'array[0] and [x] (y)', 'array[0] and [x] (y)'],
    ['an empty label is not a link', '[](x) end', '[](x) end'],
  ])('%s', (_name, input, expected) => {
    expect(sanitizeForSpeech(input)).toBe(expected);
  });

  it('matches the previous sanitizer on random markdown-ish text (no URLs or MEDIA markers, where the order changed)', () => {
    const alphabet = ['!', '[', ']', '(', ')', '`', '``', '```', '*', '_', ' ', '\n', 'a', 'b', '#', '~'];
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let run = 0; run < 5000; run++) {
      let s = '';
      const len = 1 + rand(40);
      for (let i = 0; i < len; i++) s += alphabet[rand(alphabet.length)];
      expect([s, sanitizeForSpeech(s)]).toEqual([s, previousSanitizer(s)]);
    }
  });

  describe('worst cases finish in linear time (1,000,000 characters each)', () => {
    const N = 1_000_000;
    // CPU time, not wall time: two busy loops beside the suite stretched a 60 ms run to 1,116 ms of wall
    // time. Each case first checks growth from 8,192 to 32,768 characters (linear: ~4x; the previous,
    // quadratic chain: ~16x, 1.5 s), so a super-linear step fails in seconds rather than running the
    // million-character input for the 20+ minutes a quadratic one takes (the previous chain: 550 ms at
    // 20,000 "["). Then the million: 35-160 ms of CPU quiet, 40-230 ms beside two busy loops; the 2 s
    // bound is ~10x that and far under a quadratic's minutes.
    it.each<[string, (n: number) => string]>([
      ['[ repeated', (n) => '['.repeat(n)],
      ['![ repeated', (n) => '!['.repeat(n / 2)],
      ['](  repeated', (n) => ']('.repeat(n / 2)],
      ['[a]( repeated', (n) => '[a]('.repeat(n / 4)],
      ['``` unbalanced, repeated with a gap', (n) => '```x'.repeat(n / 4)],
      ['an unclosed fence then backticks', (n) => '```' + '`'.repeat(n)],
      ['MEDIA: repeated', (n) => 'MEDIA: '.repeat(Math.floor(n / 7))],
      ['http:// repeated', (n) => 'http:// '.repeat(n / 8)],
      ['spaces then a mark', (n) => ' '.repeat(n) + '*'],
    ])(
      '%s',
      (_name, input) => {
        expect(growth(input, sanitizeForSpeech, 32_768)).toBeLessThan(10);
        const huge = input(N);
        expect(cpuMs(() => sanitizeForSpeech(huge))).toBeLessThan(2000);
      },
      60_000,
    );

    it('the previous chain, quadratic, is at least 20 times slower on 20,000 "[" (so these cases do replay the attack)', () => {
      // CPU time, best of five for ours (~0.3 ms, which one preemption or collection would swamp): 550 ms
      // against ~1.2 ms quiet.
      const ours = bestCpuMs(() => sanitizeForSpeech('['.repeat(20_000)));
      const old = cpuMs(() => previousSanitizer('['.repeat(20_000)));
      expect(old).toBeGreaterThan(ours * 20);
    });
  });
});

describe('truncateForSpeech', () => {
  it('leaves text within the bound alone', () => {
    expect(truncateForSpeech('short.', 10)).toEqual({ text: 'short.', truncated: false });
  });

  it('cuts after the last sentence end in the second half of the allowance', () => {
    const r = truncateForSpeech('One. Two three four five six seven', 20);
    expect(r).toEqual({ text: 'One. Two three …', truncated: true });
    expect(r.text.length).toBeLessThanOrEqual(20);
    expect(truncateForSpeech('Hello there. This is long text', 20)).toEqual({ text: 'Hello there. …', truncated: true });
  });

  it('falls back to the last space, then to the bound', () => {
    expect(truncateForSpeech('aaaa bbbbbbbbbbbbbbb', 8)).toEqual({ text: 'aaaa …', truncated: true });
    expect(truncateForSpeech('a'.repeat(30), 10)).toEqual({ text: 'a'.repeat(8) + ' …', truncated: true });
  });

  it('is linear on a million characters with no boundary', () => {
    const text = 'x'.repeat(1_000_000);
    // CPU time (wall time counts busy neighbours): 0.2-1.7 ms quiet; the bound is what a scan of the whole
    // text many times over would cost.
    expect(cpuMs(() => expect(truncateForSpeech(text, 5000).text).toHaveLength(5000))).toBeLessThan(500);
  });
});
