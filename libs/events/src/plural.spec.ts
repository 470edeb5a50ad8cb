import { plural } from './plural';

describe('plural', () => {
  it.each([
    [0, 'segment', undefined, '0 segments'],
    [1, 'segment', undefined, '1 segment'],
    [2, 'session', undefined, '2 sessions'],
    [1, 'reply', 'replies', '1 reply'],
    [3, 'reply', 'replies', '3 replies'],
    [1, 'address', 'addresses', '1 address'],
    [12_345, 'event', undefined, '12,345 events'],
  ])('%i %s', (n, one, many, text) => {
    expect(plural(n, one, many)).toBe(text);
  });
});
