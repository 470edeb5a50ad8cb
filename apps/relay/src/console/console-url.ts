import type { RelayConfig } from '../common/config/relay-config';
import { dialHost } from '../common/config/hosts';
import { isLoopbackHostHeader } from '../common/http/net';
import { findConsoleDir } from './console-static';

/**
 * Where a browser on this machine opens the console, said once for the start-up lines and the log:
 * `ready` (built), `not_built` (the URL it will have), or `unreachable` (the relay listens on a
 * non-loopback address only, and the console answers only on loopback).
 */
export type ConsoleWhere = { state: 'ready' | 'not_built'; url: string } | { state: 'unreachable'; host: string };

export function consoleWhere(config: Pick<RelayConfig, 'host' | 'tls' | 'consoleDir'>, port: number): ConsoleWhere {
  // Reachable when the address a local browser dials is one the loopback routes accept in a Host header.
  const host = dialHost(config.host);
  if (!isLoopbackHostHeader(host)) return { state: 'unreachable', host: config.host };
  const url = `${config.tls ? 'https' : 'http'}://${host}:${port}/console/`;
  return { state: findConsoleDir(config.consoleDir) ? 'ready' : 'not_built', url };
}

/** The start-up line (stderr) that says where the console is. */
export function consoleLine(where: ConsoleWhere): string {
  switch (where.state) {
    case 'ready':
      return `console ${where.url} (a browser on this machine, signed in with a one-time link; it answers only on loopback)`;
    case 'not_built':
      return `console not built: run "npm run build:console", then open ${where.url}`;
    case 'unreachable':
      return `console unreachable: it answers only on loopback, and the relay listens on ${where.host} (bind 0.0.0.0 or 127.0.0.1 to use it)`;
  }
}

/** A request for the console: its app or its API (`/console`, `/console/...`, `/console?...`). */
export function isConsoleUrl(url: string): boolean {
  return url === '/console' || url.startsWith('/console/') || url.startsWith('/console?');
}
