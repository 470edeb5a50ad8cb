import { DomainError } from '../errors';
import type { Principal } from '../principal';

/*
 * Who may drive which phone (issue 34). Every pairing holds the `bridge` grant by default, so the grant
 * alone cannot say who drives whom. The rule:
 * - the operator (loopback operator routes, the console) may drive any phone;
 * - a bridge session whose request comes from the relay's own host (loopback peer, no forwarding header,
 *   loopback Host) may drive any phone: that is where the agent's tools run (android_tool.py's default
 *   relay URL is http://localhost:8767, and its `device` selector picks among phones), and `svc relay mcp`
 *   as OPERATING.md sets it up;
 * - any other session drives its own phone only (the bridge device of its own token).
 * What a client says of itself (`client_surface`, `device_form_factor`) is not an authority: a phone's token
 * can say "desktop" on its next connect.
 */

/** A Device Control caller: who it is, and whether its request came from the relay's host. */
export type Driver = { caller: Principal; onHost: boolean };

/** The operator's own driving (the console), never held to a phone. */
export const OPERATOR_DRIVER: Driver = { caller: { kind: 'operator' }, onHost: true };

/** The one phone (token prefix) a driver is held to, or null when it may drive any. */
export function ownPhoneOnly(d: Driver): string | null {
  if (d.caller.kind === 'operator') return null;
  if (d.caller.kind === 'device') return d.onHost ? null : d.caller.tokenPrefix;
  // The API bearer never reaches Device Control; if it did, it would have no phone.
  return '';
}

/** Whether `d` may drive the phone of session `tokenPrefix` (also what it may see of the phones). */
export function mayDrive(d: Driver, tokenPrefix: string): boolean {
  const own = ownPhoneOnly(d);
  return own === null || own === tokenPrefix;
}

/** The refusal, one sentence for the body and a short one for the status line (python requests shows only that). */
export function notYourPhone(what: string): DomainError {
  return new DomainError(
    'bridge.not_your_phone',
    'forbidden',
    `${what}: from another machine a session drives only its own phone (drive other phones from the relay's host, where the agent's tools run)`,
    { reason: 'not_your_phone', reasonPhrase: 'Not your phone: from another machine a session drives only its own phone' },
  );
}
