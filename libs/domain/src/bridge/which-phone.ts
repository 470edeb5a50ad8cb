import type { BridgeActiveSelected, NewEvent } from '@svc/events';
import { DomainError } from '../errors';
import type { ReadModels } from '../read-models';
import { hasGrant, isLive } from '../sessions/sessions.projection';
import { notYourPhone, OPERATOR_DRIVER, ownPhoneOnly, type Driver } from './bridge-authority';
import type { BridgeDevice } from './bridge.projection';

/**
 * Which phone a call means: `device`/`device_id` selector, else the active one, else the caller's own, else
 * the only one. A driver held to its own phone (bridge-authority.ts) gets its own phone or a refusal, never
 * another: a selector is matched against its phone alone, and the active or only phone is not a fallback.
 */
export function pickDevice(m: ReadModels, opts: { selector?: string | null; driver?: Driver }, now: Date): BridgeDevice {
  const devices = m.bridge.allDevices().filter((d) => bridgeAllowed(m, d.tokenPrefix, now));
  const selector = opts.selector?.trim();
  const driver = opts.driver ?? OPERATOR_DRIVER;
  const ownOnly = ownPhoneOnly(driver);
  if (ownOnly !== null) {
    const mine = devices.find((d) => d.tokenPrefix === ownOnly);
    // Any selector but its own phone is the same refusal: another machine learns no other phone's name.
    if (selector && !(mine && matches(selector, mine.deviceId, mine.tokenPrefix, mine.deviceName)))
      throw notYourPhone(`"${selector}" is not this session's phone`);
    if (!mine) throw notYourPhone("this session's own phone is not on the bridge");
    return mine;
  }
  if (selector) {
    const hits = devices.filter((d) => matches(selector, d.deviceId, d.tokenPrefix, d.deviceName));
    if (hits.length === 1) return hits[0];
    if (hits.length > 1) {
      throw new DomainError(
        'bridge.device_ambiguous',
        'conflict',
        `${hits.length} phones match "${selector}": ${named(hits)}; use a device_id or a longer token prefix`,
        { matches: hits.length, choices: choicesOf(hits) },
      );
    }
    const known = m.sessions.active(now).some((s) => matches(selector, s.deviceId, s.tokenPrefix, s.deviceName));
    if (known) throw new DomainError('bridge.device_offline', 'unavailable', `the phone "${selector}" is paired but not connected to the bridge`);
    throw new DomainError(
      'bridge.device_not_found',
      'not_found',
      `no phone on the bridge matches "${selector}" (device_id, token prefix or device name); ` +
        (devices.length ? `the phones on the bridge: ${named(devices)}` : 'no phone is on the bridge'),
      { choices: choicesOf(devices) },
    );
  }
  if (m.bridge.active) {
    const active = devices.find((d) => d.tokenPrefix === m.bridge.active);
    if (active) return active;
    throw new DomainError(
      'bridge.device_offline',
      'unavailable',
      `the active bridge device (${m.bridge.active}) is not connected; select another with POST /bridge/select-active or name one with ?device=`,
    );
  }
  const callerPrefix = driver.caller.kind === 'device' ? driver.caller.tokenPrefix : null;
  const own = callerPrefix ? devices.find((d) => d.tokenPrefix === callerPrefix) : undefined;
  if (own) return own;
  if (devices.length === 1) return devices[0];
  if (devices.length === 0) throw new DomainError('bridge.no_device', 'unavailable', 'no phone is connected to the bridge');
  throw new DomainError(
    'bridge.device_ambiguous',
    'conflict',
    `${devices.length} phones are connected (${named(devices)}); name one with ?device=<device_id> or select one with POST /bridge/select-active`,
    { matches: devices.length, choices: choicesOf(devices) },
  );
}

/** The most phones an error names (a relay may hold many): the rest are counted. */
const CHOICES_NAMED = 10;

/** The phones a caller may pick from, by device_id and name: never a token or its prefix (the refusal may reach an agent). */
function choicesOf(devices: readonly BridgeDevice[]): { device_id: string; device_name: string }[] {
  return devices.slice(0, CHOICES_NAMED).map((d) => ({ device_id: d.deviceId, device_name: d.deviceName }));
}

function named(devices: readonly BridgeDevice[]): string {
  const shown = choicesOf(devices).map((c) => `"${c.device_name}" (device_id ${c.device_id})`);
  return shown.join(', ') + (devices.length > CHOICES_NAMED ? ` and ${devices.length - CHOICES_NAMED} more` : '');
}

function matches(selector: string, deviceId: string, tokenPrefix: string, deviceName: string): boolean {
  return deviceId === selector || (selector.length >= 4 && tokenPrefix.startsWith(selector)) || deviceName.toLowerCase() === selector.toLowerCase();
}

function bridgeAllowed(m: ReadModels, prefix: string, now: Date): boolean {
  const s = m.sessions.byTokenPrefix(prefix);
  return !!s && isLive(s, now) && hasGrant(s, 'bridge', now);
}

export function selectActive(m: ReadModels, selector: string, by: string, now: Date): NewEvent<BridgeActiveSelected>[] {
  const d = pickDevice(m, { selector }, now);
  return [{ type: 'bridge.active_selected', data: { tokenPrefix: d.tokenPrefix, deviceId: d.deviceId, by } }];
}
