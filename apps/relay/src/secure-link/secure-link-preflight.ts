import { Inject, Injectable } from '@nestjs/common';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { Clock } from '../common/loop/clock';
import { CommandLoop } from '../common/loop/command-loop';
import type { RelayConfig } from '../common/config/relay-config';
import { RELAY_CONFIG, RUNTIME, type Runtime } from '../common/auth/tokens';
import { advertisedHost, isBindAll, isLocalAddress } from '../common/config/hosts';
import { coversHost, identityReset, loadOrCreateIdentity } from './identity';
import { secureLinkStatus } from './secure-link-status';
import { loopbackUpstream } from './secure-link-upstream';
import { secureLinkDir } from './secure-link-paths';

/** What a proposed Secure Link host and port would mean at the next start. */
export type ProposedBind = {
  host: string;
  advertised_host: string;
  port: number;
  /** An address this machine holds (null: a name, not resolved here). */
  bindable: boolean | null;
  /** null: not tried (a foreign address, a name, or the port Secure Link serves on now). */
  port_free: boolean | null;
  port_note?: string;
  /** Why the address or the port would not do, or could not be told. */
  bind_note?: string;
  /** null: no identity yet (one is made for the host when Secure Link starts). */
  identity_covers_host: boolean | null;
  restart_required: boolean;
  re_pair_required: boolean;
  notes: string[];
};

/** How long the trial listen on a proposed port may take before the preflight stops waiting for it. */
export const BIND_CHECK_TIMEOUT_MS = 1500;

/**
 * `GET /secure-link/preflight[?host=&port=]` (spec 4.1, loopback, read-only): what Secure Link needs and
 * has (openssl, the identity and its expiry, the upstreams), the settings it started with, and what a
 * proposed host and port would mean at the next restart (would the identity still cover the host, is the
 * port free, must phones pair again). It never writes, rotates or restarts anything.
 */
@Injectable()
export class SecureLinkPreflight {
  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
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
      const days = Math.floor((new Date(cert.validTo).getTime() - this.clock.now().getTime()) / 86_400_000);
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
    const openssl = opensslVersion();
    const checks = [
      {
        id: 'openssl',
        ok: openssl !== null,
        detail: openssl ?? 'openssl not found (Debian: apt-get install openssl); needed only to generate an identity',
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
    let proposed: ProposedBind | null = null;
    if (proposedHost !== null || port !== null) {
      const host = proposedHost ? advertisedHost(proposedHost) : current;
      const covers = cert ? coversHost(cert, host) : null;
      const p = port ?? sl.port;
      const ours = Boolean(this.runtime.secureLink) && p === Number(new URL(this.runtime.secureLink!.url).port);
      const bind: BindCheck = ours ? { bindable: true, free: null } : await bindCheck(proposedHost ?? sl.host, p);
      const free = bind.free;
      const rePair = !sl.cert && cert !== null && covers === false;
      proposed = {
        host: proposedHost ?? sl.host,
        advertised_host: host,
        port: p,
        bindable: bind.bindable,
        port_free: free,
        ...(ours ? { port_note: 'this relay serves Secure Link on that port now' } : {}),
        ...(bind.note ? { bind_note: bind.note } : {}),
        identity_covers_host: covers,
        restart_required: (proposedHost !== null && proposedHost !== sl.host) || (port !== null && port !== sl.port),
        re_pair_required: rePair,
        notes: [
          ...(rePair ? [`the identity does not cover ${host}: before restarting, ${identityReset(dir)}`] : []),
          ...(covers === false && sl.cert ? ['the operator certificate does not cover that host: Secure Link would not start'] : []),
          ...(bind.note ? [bind.note] : []),
        ],
      };
    }
    const state = this.loop.models.secureLink.state;
    return {
      ok: checks.every((c) => c.ok),
      enabled: sl.enabled,
      status: secureLinkStatus(this.runtime, sl.enabled),
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

let opensslFound: string | null = null;

/** openssl's version, or null when it cannot run. A found one is kept: the check runs a blocking child at most until it succeeds. */
function opensslVersion(): string | null {
  if (opensslFound) return opensslFound;
  try {
    return (opensslFound = execFileSync('openssl', ['version'], { timeout: 5000 }).toString().trim());
  } catch {
    return null;
  }
}

type BindCheck = { bindable: boolean | null; free: boolean | null; note?: string };

/**
 * Whether Secure Link could listen on `host:port` (its host is its bind address too), found by listening
 * there for a moment: never by connecting anywhere, and only on an address this machine holds (a bind-all
 * address, loopback, an interface's). A foreign address cannot be bound, so nothing is tried; a DNS name
 * is not resolved (the relay resolves it when it starts). Bounded by BIND_CHECK_TIMEOUT_MS.
 */
export function bindCheck(host: string, port: number, timeoutMs = BIND_CHECK_TIMEOUT_MS): Promise<BindCheck> {
  if (!isBindAll(host) && !isLocalAddress(host)) {
    return Promise.resolve(
      net.isIP(host.replace(/^\[|\]$/g, '')) !== 0
        ? { bindable: false, free: null, note: `${host} is not an address of this machine: Secure Link could not listen there` }
        : { bindable: null, free: null, note: `${host} is a name: not resolved here (the relay listens on what it resolves to when it starts)` },
    );
  }
  const bindHost = host.toLowerCase() === 'localhost' ? '127.0.0.1' : host.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    const s = net.createServer();
    const done = (r: BindCheck) => {
      clearTimeout(timer);
      resolve(r);
    };
    const timer = setTimeout(() => {
      s.close();
      done({ bindable: true, free: null, note: `no answer from a trial listen on port ${port} within ${timeoutMs} ms` });
    }, timeoutMs);
    s.once('error', (err: NodeJS.ErrnoException) =>
      done(
        err.code === 'EADDRINUSE'
          ? { bindable: true, free: false, note: `port ${port} is in use` }
          : err.code === 'EACCES'
            ? { bindable: true, free: false, note: `port ${port} needs privileges this relay does not have` }
            : { bindable: false, free: null, note: `cannot listen on ${host}:${port}: ${err.code ?? err.message}` },
      ),
    );
    s.listen({ port, host: bindHost, exclusive: true }, () => s.close(() => done({ bindable: true, free: true })));
  });
}
