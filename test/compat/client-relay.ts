import { startRelay as startSpecRelay, type TestRelay } from '../support/harness';

/**
 * The relay as users run it for the public clients: RELAY_CLIENT_SPELLING=hermes, so it writes the
 * `hermes` names the phone app, the desktop CLI and the host's tools read (WIRE.md "Spelling"). The
 * fixtures in this folder pin what those clients parse; test/e2e pins the spec's `svc` default.
 */
export function startRelay(opts: Parameters<typeof startSpecRelay>[0] = {}): Promise<TestRelay> {
  return startSpecRelay({ ...opts, env: { RELAY_CLIENT_SPELLING: 'hermes', ...opts.env } });
}
