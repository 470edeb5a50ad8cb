import { execFileSync } from 'node:child_process';
import { createHash, X509Certificate, createPrivateKey } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { atomicWrite } from '../common/atomic-write';

/** What phones pin and verify: the certificate, its SPKI pin (`sha256/` + base64, OkHttp's form) and its facts. */
export type SecureLinkIdentity = {
  certPem: string;
  keyPem: string;
  /** Standard base64 of the leaf's DER (the desktop CLI uses it as the only CA). */
  certDer: string;
  pin: string;
  sans: string[];
  notAfter: string;
  source: 'generated' | 'operator';
  certPath: string;
  keyPath: string;
};

export class IdentityError extends Error {}

/**
 * How the operator replaces the relay's own identity: its two files, never the directory (a relay from
 * before kept the Reach host id there too, and the broker knows the relay only by it: secure-link-paths.ts).
 */
export function identityReset(dir: string): string {
  return `remove ${path.join(dir, 'cert.pem')} and ${path.join(dir, 'key.pem')} to make a new identity, then pair every phone again`;
}

/** `sha256/` + standard padded base64 of SHA-256 over the certificate's SubjectPublicKeyInfo DER. */
export function spkiPin(cert: X509Certificate): string {
  const spki = cert.publicKey.export({ type: 'spki', format: 'der' });
  return `sha256/${createHash('sha256').update(spki).digest('base64')}`;
}

/** `IP:<addr>` for an address, `DNS:<name>` otherwise (the subjectAltName the identity is made with). */
export function sanFor(host: string): string {
  return net.isIP(host) ? `IP:${host}` : `DNS:${host}`;
}

function sansOf(cert: X509Certificate): string[] {
  return (cert.subjectAltName ?? '')
    .split(/,\s*/)
    .filter(Boolean)
    .map((s) => s.replace(/^IP Address:/, 'IP:'));
}

/** Whether the certificate names `host` (IPv6 compared in canonical form: openssl prints it expanded). */
export function coversHost(cert: X509Certificate, host: string): boolean {
  if (net.isIP(host)) return cert.checkIP(host) !== undefined;
  return cert.checkHost(host) !== undefined;
}

/**
 * The Secure Link identity: the operator's certificate and key (RELAY_SECURE_LINK_CERT/KEY), else the
 * relay's own under `<dir>` (`cert.pem`, `key.pem`, both 0600 in a 0700 directory), generated once with
 * openssl (EC P-256, SHA-256, ten years, self-signed, the advertised host as its only subjectAltName)
 * and never rotated by itself. An existing identity that does not cover the advertised host is refused
 * (IdentityError naming the fix): silently making a new one would break every paired phone's pin.
 */
export function loadOrCreateIdentity(opts: {
  dir: string;
  host: string;
  cert?: string | null;
  key?: string | null;
  create?: boolean;
}): SecureLinkIdentity {
  const operator = Boolean(opts.cert || opts.key);
  if (operator && !(opts.cert && opts.key)) throw new IdentityError('RELAY_SECURE_LINK_CERT and RELAY_SECURE_LINK_KEY go together');
  const certPath = opts.cert ?? path.join(opts.dir, 'cert.pem');
  const keyPath = opts.key ?? path.join(opts.dir, 'key.pem');
  if (!operator && !fs.existsSync(certPath)) {
    if (opts.create === false) throw new IdentityError(`no identity yet under ${opts.dir} (one is generated when Secure Link starts)`);
    generate(opts.dir, certPath, keyPath, opts.host);
  }
  // What the operator can do about a broken identity of the relay's own (an operator's is the operator's to fix).
  const ownFix = operator ? '' : `; ${identityReset(opts.dir)}`;
  let certPem: string;
  let keyPem: string;
  try {
    certPem = fs.readFileSync(certPath, 'utf8');
    keyPem = fs.readFileSync(keyPath, 'utf8');
  } catch (err) {
    throw new IdentityError(`cannot read the Secure Link identity: ${(err as Error).message}${ownFix}`);
  }
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
    if (!cert.checkPrivateKey(createPrivateKey(keyPem))) throw new Error('the key does not belong to the certificate');
  } catch (err) {
    throw new IdentityError(`the Secure Link identity at ${certPath} is not usable: ${(err as Error).message}${ownFix}`);
  }
  if (!operator && opts.create !== false)
    try {
      fs.chmodSync(keyPath, 0o600);
    } catch {
      /* read-only media: the check below still runs */
    }
  if (!coversHost(cert, opts.host))
    throw new IdentityError(
      `the Secure Link certificate (${sansOf(cert).join(', ') || 'no subjectAltName'}) does not cover ${opts.host}; ` +
        (operator ? 'use a certificate for that host' : identityReset(opts.dir)),
    );
  if (new Date(cert.validTo).getTime() < Date.now())
    throw new IdentityError(`the Secure Link certificate expired on ${new Date(cert.validTo).toISOString()}${ownFix}`);
  return {
    certPem,
    keyPem,
    certDer: cert.raw.toString('base64'),
    pin: spkiPin(cert),
    sans: sansOf(cert),
    notAfter: new Date(cert.validTo).toISOString(),
    source: operator ? 'operator' : 'generated',
    certPath,
    keyPath,
  };
}

function generate(dir: string, certPath: string, keyPath: string, host: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
  const tmp = fs.mkdtempSync(path.join(dir, '.new-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-sha256',
        '-nodes',
        '-days',
        '3650',
        '-subj',
        '/CN=svc Secure Link',
        '-addext',
        `subjectAltName=${sanFor(host)}`,
        '-keyout',
        path.join(tmp, 'key.pem'),
        '-out',
        path.join(tmp, 'cert.pem'),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], timeout: 30_000 },
    );
    // The key first: a crash between the two leaves a key without a certificate, which is regenerated.
    atomicWrite(keyPath, fs.readFileSync(path.join(tmp, 'key.pem'), 'utf8'));
    atomicWrite(certPath, fs.readFileSync(path.join(tmp, 'cert.pem'), 'utf8'));
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: Buffer };
    throw new IdentityError(
      e.code === 'ENOENT'
        ? 'openssl is not installed (Debian: apt-get install openssl); it makes the Secure Link identity'
        : `openssl failed: ${e.stderr?.toString().trim().slice(0, 300) ?? e.message}`,
    );
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
