import type { SecureLinkStatus } from '@svc/console-api';
import type { Runtime } from '../common/auth/tokens';

/** Secure Link serves phones (`available`), was enabled but is not running (`unavailable`), or is off. */
export function secureLinkStatus(runtime: Pick<Runtime, 'secureLink'>, enabled: boolean): SecureLinkStatus {
  return runtime.secureLink ? 'available' : enabled ? 'unavailable' : 'disabled';
}
