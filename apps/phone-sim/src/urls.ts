/** The relay's HTTP origin from the URL the simulator was given. */
export function httpUrl(relayUrl: string): string {
  const u = new URL(relayUrl.replace(/^ws/, 'http'));
  return u.origin;
}

/** `ws://h:p` → `ws://h:p/ws`; `http(s)://` becomes `ws(s)://`; a URL with a path is kept. */
export function wsUrl(relayUrl: string): string {
  const u = new URL(relayUrl.replace(/^http/, 'ws'));
  if (u.pathname === '' || u.pathname === '/') u.pathname = '/ws';
  return u.toString();
}
