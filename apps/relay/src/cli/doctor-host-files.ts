import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DoctorCheck } from './doctor-check';

const GiB = 1024 ** 3;

/** RELAY_SSL_CERT: readable, and how long it stays valid (plain HTTP is a warning). */
export function tlsCheck(env: NodeJS.ProcessEnv): DoctorCheck {
  if (!env.RELAY_SSL_CERT)
    return {
      id: 'tls',
      status: 'warn',
      summary: 'plain HTTP/ws: phones must opt in to a plain connection, and the API key is refused from other hosts',
      fix: 'set RELAY_SSL_CERT and RELAY_SSL_KEY, or put a TLS proxy in front (RELAY_TRUST_PROXY_HEADERS=1)',
    };
  try {
    const cert = new X509Certificate(fs.readFileSync(env.RELAY_SSL_CERT));
    const days = Math.floor((Date.parse(cert.validTo) - Date.now()) / 86_400_000);
    return days < 0
      ? {
          id: 'tls',
          status: 'error',
          summary: `the certificate expired ${-days} days ago (${cert.validTo})`,
          fix: 'renew RELAY_SSL_CERT and restart the relay',
        }
      : days < 14
        ? { id: 'tls', status: 'warn', summary: `the certificate expires in ${days} days (${cert.validTo})`, fix: 'renew RELAY_SSL_CERT soon' }
        : { id: 'tls', status: 'ok', summary: `TLS certificate valid for ${days} more days` };
  } catch (err) {
    return {
      id: 'tls',
      status: 'error',
      summary: `RELAY_SSL_CERT cannot be read as a certificate (${(err as Error).message.slice(0, 80)})`,
      fix: 'point RELAY_SSL_CERT at a PEM certificate',
    };
  }
}

/** Free space where the relay writes (the home, or where it will be made). */
export function diskCheck(home: string): DoctorCheck {
  try {
    const st = fs.statfsSync(fs.existsSync(home) ? home : path.dirname(home));
    const free = st.bavail * st.bsize;
    const gib = (free / GiB).toFixed(1);
    return free < 100 * 1024 ** 2
      ? {
          id: 'disk',
          status: 'error',
          summary: `${gib} GiB free where the relay writes`,
          fix: 'free disk space: the relay stops rather than lose an event',
        }
      : free < GiB
        ? { id: 'disk', status: 'warn', summary: `${gib} GiB free where the relay writes`, fix: 'free disk space soon' }
        : { id: 'disk', status: 'ok', summary: `${gib} GiB free where the relay writes` };
  } catch (err) {
    return { id: 'disk', status: 'warn', summary: `free space unknown (${(err as Error).message.slice(0, 80)})` };
  }
}

/** The service's environment file holds keys: nobody else should read it. */
export function envFileCheck(home: string): DoctorCheck {
  const envFile = path.join(home, '.env');
  try {
    const mode = fs.statSync(envFile).mode & 0o777;
    return mode & 0o044
      ? { id: 'env-file', status: 'warn', summary: `${envFile} is readable by others (mode ${mode.toString(8)})`, fix: `chmod 600 ${envFile}` }
      : { id: 'env-file', status: 'ok', summary: `${envFile} is private (mode ${mode.toString(8)})` };
  } catch {
    return { id: 'env-file', status: 'ok', summary: 'no service .env file (variables come from the environment)' };
  }
}
