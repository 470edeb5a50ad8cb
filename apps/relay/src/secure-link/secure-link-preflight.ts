import { Inject, Injectable } from '@nestjs/common';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { CommandLoop } from '../common/command-loop';
import type { RelayConfig } from '../common/config';
import { RELAY_CONFIG, RUNTIME, type Runtime } from '../common/tokens';
import { advertisedHost } from '../common/hosts';
import { coversHost, loadOrCreateIdentity } from './identity';
import { loopbackUpstream } from './secure-link-upstream';
import { secureLinkDir } from './secure-link.start';

/**
 * `GET /secure-link/preflight[?host=&port=]` (spec 4.1, loopback, read-only): what Secure Link needs and
 * has (openssl, the identity and its expiry, the upstreams), the settings it started with, and what a
 * proposed host and port would mean at the next restart (would the identity still cover the host, is the
 * port free, must phones pair again). It never writes, rotates or restarts anything.
 */
@Injectable()
export class SecureLinkPreflight {
  constructor(
    private readonly log: CommandLoop,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(RUNTIME) private readonly runtime: Runtime,
  ) {}

  /** What Secure Link needs and has, and what `proposedHost` and `port` (either may be null) would mean. */
  async check(proposedHost: string | null, port: number | null) {
    const sl = this.config.secureLink;
    const current = advertisedHost(sl.host);
    const dir = secureLinkDir(this.config);
    const certPath = sl.cert ?? path.join(dir, 'cert.pem');
    let identity: Record<string, unknown>;
    let cert: X509Certificate | null = null;
    try {
      cert = new X509Certificate(fs.readFileSync(certPath));
      const id = (() => {
        try {
          return loadOrCreateIdentity({ dir, host: current, cert: sl.cert, key: sl.key, create: false });
        } catch (err) {
          return err as Error;
        }
      })();
      const days = Math.floor((new Date(cert.validTo).getTime() - Date.now()) / 86_400_000);
      identity = {
        present: true,
        source: sl.cert ? 'operator' : 'generated',
        path: certPath,
        pin_sha256: id instanceof Error ? null : id.pin,
        not_after: new Date(cert.validTo).toISOString(),
        days_left: days,
        covers_host: coversHost(cert, current),
        usable: !(id instanceof Error),
        ...(id instanceof Error ? { problem: id.message } : {}),
      };
    } catch (err) {
      identity = {
        present: false,
        path: certPath,
        usable: false,
        problem: sl.cert ? `cannot read ${certPath}: ${(err as Error).message}` : 'no identity yet: one is generated when Secure Link starts',
      };
    }
    const checks = [
      {
        id: 'openssl',
        ok: opensslVersion() !== null,
        detail: opensslVersion() ?? 'openssl not found (Debian: apt-get install openssl); needed only to generate an identity',
      },
      {
        id: 'identity',
        ok: identity.usable === true || (!identity.present && !sl.cert),
        detail: String(identity.problem ?? `pin ${String(identity.pin_sha256)}`),
      },
      {
        id: 'api-upstream',
        ok: loopbackUpstream(this.config.webapiUrl, 'API') !== null,
        detail: `/api -> ${this.config.webapiUrl}${loopbackUpstream(this.config.webapiUrl, 'API') ? '' : ' (not http on loopback: /api answers 503)'}`,
      },
      {
        id: 'dashboard-upstream',
        ok: loopbackUpstream(sl.dashboardUrl, 'Dashboard') !== null,
        detail: `/dashboard -> ${sl.dashboardUrl}${loopbackUpstream(sl.dashboardUrl, 'Dashboard') ? '' : ' (not http on loopback: /dashboard answers 503)'}`,
      },
    ];
    let proposed: Record<string, unknown> | null = null;
    if (proposedHost !== null || port !== null) {
      const host = proposedHost ? advertisedHost(proposedHost) : current;
      const covers = cert ? coversHost(cert, host) : null;
      const p = port ?? sl.port;
      const ours = this.runtime.secureLink && p === Number(new URL(this.runtime.secureLink.url).port);
      const free = ours ? null : await portFree(proposedHost ?? sl.host, p);
      const rePair = !sl.cert && cert !== null && covers === false;
      proposed = {
        host: proposedHost ?? sl.host,
        advertised_host: host,
        port: p,
        port_free: free,
        ...(ours ? { port_note: 'this relay serves Secure Link on that port now' } : {}),
        identity_covers_host: covers,
        restart_required: (proposedHost !== null && proposedHost !== sl.host) || (port !== null && port !== sl.port),
        re_pair_required: rePair,
        notes: [
          ...(rePair ? [`the identity does not cover ${host}: remove ${dir} before restarting to make a new one, then pair every phone again`] : []),
          ...(covers === false && sl.cert ? ['the operator certificate does not cover that host: Secure Link would not start'] : []),
          ...(free === false ? [`port ${p} is in use`] : []),
        ],
      };
    }
    const state = this.log.models.secureLink.state;
    return {
      ok: checks.every((c) => c.ok),
      enabled: sl.enabled,
      status: this.runtime.secureLink ? 'available' : sl.enabled ? 'unavailable' : 'disabled',
      ...(state.reason && !this.runtime.secureLink ? { last_error: state.reason } : {}),
      url: this.runtime.secureLink?.url ?? null,
      settings: {
        host: sl.host,
        advertised_host: current,
        port: sl.port,
        dashboard_url: sl.dashboardUrl,
        api_url: this.config.webapiUrl,
        cert: sl.cert,
        key: sl.key ? '(set)' : null,
      },
      identity,
      checks,
      proposed,
    };
  }
}

function opensslVersion(): string | null {
  try {
    return execFileSync('openssl', ['version'], { timeout: 5000 }).toString().trim();
  } catch {
    return null;
  }
}

function portFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, host, () => s.close(() => resolve(true)));
  });
}
