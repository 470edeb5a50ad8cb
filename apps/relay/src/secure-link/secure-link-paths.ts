import * as fs from 'node:fs';
import * as path from 'node:path';
import { relayDir } from '../common/config/config';
import { type RelayConfig } from '../common/config/relay-config';

/** Where the relay keeps its own Secure Link identity (`cert.pem`, `key.pem`). */
export function secureLinkDir(config: Pick<RelayConfig, 'svcHome'>): string {
  return path.join(relayDir(config), 'secure-link');
}

/**
 * The Reach host id's file: RELAY_SECURE_LINK_BROKER_HOST_ID_FILE, else `<svc_home>/relay-secure-link/host-id`
 * (the spec's default), apart from the identity so that replacing the identity never changes the id the
 * broker's credentials file names. A relay from before kept it beside the identity (`secureLinkDir`); one
 * found there, with none at the default, stays there and is used as it is, so an upgrade breaks no broker
 * entry (and an older relay started again still finds it).
 */
export function reachHostIdFile(config: Pick<RelayConfig, 'svcHome'>, configured: string | null): string {
  if (configured) return configured;
  const file = path.join(config.svcHome, 'relay-secure-link', 'host-id');
  const before = path.join(secureLinkDir(config), 'host-id');
  return !fs.existsSync(file) && fs.existsSync(before) ? before : file;
}
