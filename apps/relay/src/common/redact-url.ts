/**
 * URLs the operator configures (an update feed, a webhook) may carry credentials: `user:pass@` or a token
 * in the query. Anything the relay says about such a URL (an error to a phone, a log line, a refusal at
 * start) shows it through these: the userinfo and every query value become `redacted`; `redactUrl` drops
 * the fragment too.
 */
const REDACTED = 'redacted';

/** `https://user:pw@feed.example/v.json?token=abc` -> `https://redacted@feed.example/v.json?token=redacted`. */
export function redactUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return redactUrlsIn(raw);
  }
  const query = [...u.searchParams.keys()].map((k) => `${encodeURIComponent(k)}=${REDACTED}`).join('&');
  const userinfo = u.username || u.password ? `${REDACTED}@` : '';
  const authority = u.host ? `//${userinfo}${u.host}` : '';
  return `${u.protocol}${authority}${u.pathname}${query ? `?${query}` : ''}`;
}

/**
 * Every URL-shaped credential in free text (an error message that quotes a URL): `scheme://userinfo@`
 * keeps the scheme and loses the userinfo; each `?k=v` / `&k=v` value after a URL becomes `redacted`.
 */
export function redactUrlsIn(text: string): string {
  return text
    .replace(/([a-z][a-z0-9+.-]{0,31}:\/\/)[^\s/?#@]{0,1024}@/gi, `$1${REDACTED}@`)
    .replace(/([?&][^\s=&#?]{0,256}=)[^\s&#]{0,4096}/g, `$1${REDACTED}`);
}
