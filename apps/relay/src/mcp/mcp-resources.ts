import { DomainError, epoch, hasGrant, mayDrive, type Driver, type ReadModels } from '@svc/domain';
import type { ReadResourceResult, Resource } from '@modelcontextprotocol/sdk/types.js';
import { bridgeDeviceView, safetyDecisionView } from '../bridge/bridge-views';

/** How many safety decisions the resource shows (newest first); the console's Bridge page keeps more. */
export const RECENT_DECISIONS = 50;

/**
 * The read-only MCP resources: the paired phones that hold a `bridge` grant, with their Device Control
 * state when they are on the bridge, and the safety pipeline's recent decisions. The same views as the
 * relay's `/bridge/*` routes (bridge-views.ts); session tokens and digests never appear.
 */
export const RESOURCES: readonly Resource[] = [
  {
    uri: 'device-control://phones',
    name: 'phones',
    title: 'Paired phones and their Device Control state',
    description:
      'Phones paired with this relay that hold a bridge grant: name, device_id and token prefix (each usable as `device`), whether they are on the bridge, and their Device Control state (master toggle, foreground app, auto-disable).',
    mimeType: 'application/json',
  },
  {
    uri: 'device-control://safety-decisions',
    name: 'safety-decisions',
    title: 'Recent safety decisions',
    description: `The newest ${RECENT_DECISIONS} decisions of the safety pipeline (blocked packages, confirmations asked and answered, auto-disable), newest first, with their reasons.`,
    mimeType: 'application/json',
  },
];

/**
 * One resource's contents now; `isOnline`: whether the phone's bridge socket is open. The phones are those
 * the session may drive (bridge-authority.ts): from another machine, its own alone.
 */
export function readResource(uri: string, m: ReadModels, isOnline: (tokenPrefix: string) => boolean, driver: Driver, now: Date): ReadResourceResult {
  const active = m.bridge.active;
  switch (uri) {
    case 'device-control://phones':
      return json(uri, {
        phones: phones(m, isOnline, now).filter((p) => mayDrive(driver, p.token_prefix)),
        active: active && mayDrive(driver, active) ? active : null,
      });
    case 'device-control://safety-decisions':
      return json(uri, { decisions: m.bridge.safety(RECENT_DECISIONS).map(safetyDecisionView) });
    default:
      throw new DomainError(
        'mcp.unknown_resource',
        'not_found',
        `no resource ${uri}: read device-control://phones or device-control://safety-decisions`,
      );
  }
}

function phones(m: ReadModels, isOnline: (tokenPrefix: string) => boolean, now: Date) {
  return m.sessions
    .active(now)
    .filter((s) => hasGrant(s, 'bridge', now))
    .map((s) => {
      const d = m.bridge.device(s.tokenPrefix);
      return {
        device_id: s.deviceId,
        device_name: s.deviceName,
        token_prefix: s.tokenPrefix,
        on_bridge: d !== undefined && isOnline(s.tokenPrefix),
        last_seen: epoch(s.lastSeen),
        device_control: d ? bridgeDeviceView(d, m.bridge.active, isOnline(s.tokenPrefix)) : null,
      };
    });
}

function json(uri: string, value: unknown): ReadResourceResult {
  return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(value) }] };
}
