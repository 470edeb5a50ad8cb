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
    it.each([
      ['[ repeated', '['.repeat(N)],
      ['![ repeated', '!['.repeat(N / 2)],
      ['](  repeated', ']('.repeat(N / 2)],
      ['[a]( repeated', '[a]('.repeat(N / 4)],
      ['``` unbalanced, repeated with a gap', '```x'.repeat(N / 4)],
      ['an unclosed fence then backticks', '```' + '`'.repeat(N)],
      ['MEDIA: repeated', 'MEDIA: '.repeat(N / 7)],
      ['http:// repeated', 'http:// '.repeat(N / 8)],
      ['spaces then a mark', ' '.repeat(N) + '*'],
    ])('%s', (_name, input) => {
      const t0 = performance.now();
      sanitizeForSpeech(input);
      expect(performance.now() - t0).toBeLessThan(1000);
    });

    it('the previous chain, quadratic, is at least 20 times slower on 20,000 "[" (so these cases do replay the attack)', () => {
      const t0 = performance.now();
      sanitizeForSpeech('['.repeat(20_000));
      const ours = performance.now() - t0;
      const t1 = performance.now();
      previousSanitizer('['.repeat(20_000));
      const old = performance.now() - t1;
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
    const t0 = performance.now();
    expect(truncateForSpeech('x'.repeat(1_000_000), 5000).text).toHaveLength(5000);
    expect(performance.now() - t0).toBeLessThan(500);
  });
});
