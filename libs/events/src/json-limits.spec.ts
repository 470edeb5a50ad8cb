import { jsonDepthExceeds, JsonTooDeepError, parseJsonBounded } from './json-limits';

describe('jsonDepthExceeds', () => {
  it('counts object and array nesting, and stops at the limit', () => {
    expect(jsonDepthExceeds('{"a":[1,{"b":[]}]}', 4)).toBe(false);
    expect(jsonDepthExceeds('{"a":[1,{"b":[]}]}', 3)).toBe(true);
    expect(jsonDepthExceeds('[[[]],[[]]]', 3)).toBe(false);
    expect(jsonDepthExceeds('1', 0)).toBe(false);
  });

  it('ignores brackets inside strings, including after escaped quotes and backslashes', () => {
    expect(jsonDepthExceeds(JSON.stringify({ t: '[[[[{{{{' }), 1)).toBe(false);
    expect(jsonDepthExceeds(JSON.stringify({ t: 'a\\"[[[[' }), 1)).toBe(false);
    expect(jsonDepthExceeds(JSON.stringify({ t: 'end\\', u: [[[]]] }), 3)).toBe(true);
    expect(jsonDepthExceeds(JSON.stringify({ t: 'end\\', u: [[[]]] }), 4)).toBe(false);
  });

  it('walks 20,000 levels without recursion', () => {
    expect(jsonDepthExceeds('['.repeat(20_000) + ']'.repeat(20_000))).toBe(true);
  });
});

describe('parseJsonBounded', () => {
  it('parses within the limit and throws JsonTooDeepError past it', () => {
    expect(parseJsonBounded('{"a":{"b":1}}', 2)).toEqual({ a: { b: 1 } });
    expect(() => parseJsonBounded('{"a":{"b":{}}}', 2)).toThrow(JsonTooDeepError);
  });
});
