/**
 * The console's sign-in cookie: a random 256-bit value whose keyed digest the log records (console-access).
 * Its name carries the relay's port: browsers keep cookies per host, not per port, so two relays on one
 * machine would otherwise overwrite each other's.
 */
export function consoleCookieName(port: number): string {
  return `svc_console_${port}`;
}

/** A cookie header is read only this far: a browser sends a few hundred bytes; a peer's 1 MiB header is not scanned. */
const MAX_COOKIE_HEADER = 8192;

/** The value of cookie `name` in a `Cookie` header, or null. Linear: a split, no pattern. */
export function cookieValue(header: string | string[] | undefined, name: string): string | null {
  const h = Array.isArray(header) ? header.join('; ') : header;
  if (h === undefined || h.length > MAX_COOKIE_HEADER) return null;
  for (const part of h.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    return /^[A-Za-z0-9_-]{16,128}$/.test(value) ? value : null;
  }
  return null;
}

/**
 * The `Set-Cookie` for a signed-in browser: HttpOnly (no script reads it), SameSite=Strict (no other site's
 * page makes the browser send it), Path=/console (only the console's requests carry it), Secure over TLS.
 */
export function consoleCookie(port: number, value: string, maxAgeSeconds: number, tls: boolean): string {
  return `${consoleCookieName(port)}=${value}; Path=/console; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${tls ? '; Secure' : ''}`;
}

/** The `Set-Cookie` that ends it in the browser. */
export function clearedConsoleCookie(port: number, tls: boolean): string {
  return consoleCookie(port, '', 0, tls);
}
