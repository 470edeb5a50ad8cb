import { redactUrl, redactUrlsIn } from './redact-url';

describe('redactUrl / redactUrlsIn: a configured URL never shows its credentials', () => {
  it.each([
    ['https://user:s3cret@feed.example/v.json?token=abc&x=1#frag', 'https://redacted@feed.example/v.json?token=redacted&x=redacted'],
    ['https://feed.example:8443/v.json', 'https://feed.example:8443/v.json'],
    ['http://only-user@127.0.0.1:9/p?flag', 'http://redacted@127.0.0.1:9/p?flag=redacted'],
  ])('%s', (raw, shown) => {
    expect(redactUrl(raw)).toBe(shown);
  });

  it('text that is not a URL, and URLs quoted inside an error message', () => {
    expect(redactUrl('feed at ftp://a:s3cret@h?token=abc')).toBe('feed at ftp://redacted@h?token=redacted');
    const msg = redactUrlsIn(
      'Request cannot be constructed from a URL that includes credentials: https://user:s3cret@feed.example/v.json?token=abc&k=v',
    );
    expect(msg).toBe(
      'Request cannot be constructed from a URL that includes credentials: https://redacted@feed.example/v.json?token=redacted&k=redacted',
    );
    expect(redactUrlsIn('the feed answered 404')).toBe('the feed answered 404');
  });
});
