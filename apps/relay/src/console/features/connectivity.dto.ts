import { isIP } from 'node:net';
import { Check, coded, RefuseNonObject, RefuseUnknownKeys } from '../../common/http/dto-refusals';
import { IsOptional } from '../../common/http/validators';

/** A DNS name: dot-separated labels of letters, digits and inner hyphens (no scheme, port, path or user). */
const DNS_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

const isHost = (v: unknown): boolean => typeof v === 'string' && (isIP(v.replace(/^\[|\]$/g, '')) !== 0 || DNS_NAME.test(v));

/**
 * `POST /console/api/connectivity/preflight`: a host and port the operator thinks of giving Secure Link.
 * Only a bare host (an IP address or a DNS name) and a port: the check is the relay's own (would it listen
 * there, would its identity cover the name), never a connection to what the body names.
 */
@RefuseNonObject('connectivity.bad_body', 'the body must be a JSON object: {"host": "...", "port": 9443}')
@RefuseUnknownKeys('connectivity.bad_body', (key) => `unknown field ${key.slice(0, 64)}: give host and port`)
export class ConnectivityPreflightDto {
  @Check('isHost', isHost, coded('connectivity.bad_host', 'host must be an IP address or a DNS name (no scheme, port or path)'))
  host!: string;

  @IsOptional()
  @Check(
    'isPort',
    (v) => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 65535,
    coded('connectivity.bad_port', 'port must be a whole number from 1 to 65535'),
  )
  port?: number;
}
