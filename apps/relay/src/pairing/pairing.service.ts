import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { newId, newToken } from '../reach/protocol';
import { unreachableQrWarning } from './phone-reach';
import {
  epoch,
  approvePairing,
  clientNames,
  codeFromBytes,
  denyPairing,
  expireCodes,
  pairingTerms,
  registerCode,
  requestPairing,
  requireCode,
  type PairingCode,
  type Principal,
  actorOf,
  DomainError,
  type TermsInput,
} from '@svc/domain';
import type { RouteCandidateRow } from '@svc/console-api';
import type { PairingTerms } from '@svc/events';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { Clock } from '../common/loop/clock';
import type { RelayConfig } from '../common/config/relay-config';
import { advertisedHost, DEFAULT_PORT, isBindAll, isLoopbackHost, lanAddress, urlHost } from '../common/config/hosts';
import { CommandLoop } from '../common/loop/command-loop';
import { Scheduler } from '../common/loop/scheduler';
import { Secrets, secureRandomBytes } from '../common/auth/secrets';
import { LOGGER, RELAY_CONFIG, RUNTIME, type Runtime } from '../common/auth/tokens';
import { canonicalJson, pairingUrl, type QrPayload } from './qr-payload';

@Injectable()
export class PairingService implements OnApplicationBootstrap {
  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    private readonly secrets: Secrets,
    scheduler: Scheduler,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(RUNTIME) private readonly runtime: Runtime,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    scheduler.register('pairing.expire', (m, now) => expireCodes(m, now));
  }

  /** RELAY_PAIRING_CODE pre-registers a code at start (spec 4.13). */
  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.pairingCode) return;
    try {
      await this.register(this.config.pairingCode, {}, 'env');
      this.logger.info('RELAY_PAIRING_CODE registered (valid for 10 minutes)');
    } catch (err) {
      this.logger.error({ err: (err as Error).message }, 'RELAY_PAIRING_CODE not registered');
    }
  }

  async register(rawCode: string, input: TermsInput, source: 'register' | 'mint' | 'env' = 'register') {
    const code = requireCode(rawCode);
    const terms = pairingTerms(input);
    const stored = await this.loop.run('operator', (m, now) => registerCode(m, { codeDigest: this.secrets.digest(code), source, terms }, now));
    // The registration may follow the expiry of the code's previous, unused registration and a clearing of blocks.
    const registered = stored.find((e) => e.type === 'pairing.code_registered');
    return { code, terms, expires_at: epoch(registered!.data.expiresAt) };
  }

  async mint(input: MintInput) {
    const terms = pairingTerms(input);
    const secureLink = this.runtime.secureLink?.candidate() ?? null;
    let endpoints = withSecureLink(input.endpoints === undefined ? undefined : checkEndpoints(input.endpoints), secureLink);
    // Reach, when connected: a one-use bootstrap credential for this pairing (10 minutes, the code's life),
    // published to the broker as its digest before the QR names it. Tried by clients only after the rest.
    const reach = this.runtime.reach;
    if (secureLink && reach?.connected) {
      const token = newToken();
      const expiresAt = epoch(this.clock.now()) + 600;
      try {
        await reach.publishBootstrap(newId(), token, expiresAt);
        endpoints = withSecureLink(
          [
            ...(endpoints ?? []),
            {
              role: 'outbound_broker',
              recommended: false,
              experimental: true,
              security: 'e2ee_pinned_tls',
              broker: {
                protocol_version: 1,
                url: reach.connectUrl,
                host_id: reach.hostId,
                credential_kind: 'bootstrap',
                token,
                expires_at: expiresAt,
              },
              proxy: JSON.parse(JSON.stringify(secureLink.proxy)) as Record<string, unknown>,
            },
          ],
          secureLink,
        );
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'Reach bootstrap not published; the QR has no Reach route');
      }
    }
    const api = this.apiServer(input);
    let registered: { code: string; expires_at: number } | null = null;
    for (let attempt = 0; !registered; attempt++) {
      try {
        registered = await this.register(codeFromBytes(secureRandomBytes(16)), input, 'mint');
      } catch (err) {
        if (attempt > 3) throw err;
      }
    }
    const relayUrl = input.relay_url ?? this.advertisedUrl();
    const relay: QrPayload['relay'] = {
      url: relayUrl,
      code: registered.code,
      ...(input.ttl_seconds !== undefined ? { ttl_seconds: input.ttl_seconds } : {}),
      ...(input.grants ? { grants: wireGrants(terms) } : {}),
      ...(terms.transportHint ? { transport_hint: terms.transportHint } : {}),
    };
    const names = clientNames(this.config.clientSpelling);
    const dashboardUrl = input.dashboard_url?.replace(/(?<!\/)\/+$/, '') || undefined;
    const unsigned: Omit<QrPayload, 'sig'> = {
      [names.brand]: endpoints ? 3 : Object.keys(relay).length > 2 ? 2 : 1,
      ...api,
      relay,
      ...(endpoints ? { endpoints } : {}),
      ...(dashboardUrl ? { dashboard_url: dashboardUrl } : {}),
    };
    // HMAC-SHA-256 under a key derived from secret.key, standard base64 like the reference's `sig`.
    const sig = Buffer.from(this.secrets.mac('qr', canonicalJson(unsigned)), 'base64url').toString('base64');
    const qrPayload = JSON.stringify({ ...unsigned, sig });
    const warning = this.phoneWarning(relayUrl);
    return {
      ok: true as const,
      code: registered.code,
      ...(warning ? { warning } : {}),
      qr_payload: qrPayload,
      pairing_url: pairingUrl(qrPayload, names),
      expires_at: registered.expires_at,
      host: api.host,
      port: api.port,
      tls: api.tls,
      relay_url: relayUrl,
      ...(dashboardUrl ? { dashboard_url: dashboardUrl } : {}),
      ...(endpoints ? { endpoints } : {}),
    };
  }

  /**
   * The API server the QR points the phone at (its chat backend): the host's own description when it
   * sends one (pair.py always does), else API_SERVER_HOST/PORT with a loopback or bind-all host replaced
   * by this machine's LAN address (a phone cannot dial the host's loopback). The key: the body's
   * `api_key` (`""`: none configured), else API_SERVER_KEY while the API server is enabled, else `""`.
   */
  private apiServer(input: MintInput): { host: string; port: number; key: string; tls: boolean } {
    const fallback = new URL(this.config.apiServer.url);
    let host = input.host ?? fallback.hostname.replace(/^\[|\]$/g, '');
    const local = input.host === undefined ? isBindAll(host) || isLoopbackHost(host) : isBindAll(host);
    if (local) host = lanAddress() ?? host;
    const port = input.port ?? (Number(fallback.port) || DEFAULT_PORT.apiServer);
    const key = input.api_key ?? (this.config.apiServer.enabled ? (this.config.apiServer.key ?? '') : '');
    return { host, port, key, tls: input.tls ?? fallback.protocol === 'https:' };
  }

  /** `POST /pairing`: a pending code; the operator approves or denies it. */
  async request(ip: string, deviceName: string | null) {
    const code = codeFromBytes(secureRandomBytes(16));
    const requestId = randomUUID();
    const [stored] = await this.loop.run(`public:${ip}`, (m, now) =>
      requestPairing(m, { codeDigest: this.secrets.digest(code), requestId, ip, deviceName }, now),
    );
    return { ok: true as const, code, request_id: requestId, status: 'pending', expires_at: epoch(stored.data.expiresAt) };
  }

  async approve(ref: { code?: string; request_id?: string }, input: TermsInput, by: Principal) {
    const terms = pairingTerms(input);
    const codeDigest = ref.code ? this.secrets.digest(requireCode(ref.code)) : undefined;
    const [stored] = await this.loop.run(actorOf(by), (m, now) => approvePairing(m, { requestId: ref.request_id, codeDigest }, terms, now));
    return { ok: true as const, request_id: stored.data.requestId, status: 'approved' };
  }

  async deny(ref: { code?: string; request_id?: string }, by: Principal) {
    const codeDigest = ref.code ? this.secrets.digest(requireCode(ref.code)) : undefined;
    const [stored] = await this.loop.run(actorOf(by), (m, now) => denyPairing(m, { requestId: ref.request_id, codeDigest }, now));
    return { ok: true as const, request_id: stored.data.requestId, status: 'denied' };
  }

  /** Live codes and pending requests, without the codes themselves (for the operator). */
  pending(): Array<ReturnType<typeof describePairing>> {
    return this.loop.models.pairing.live(this.clock.now()).map(describePairing);
  }

  /**
   * The routes a QR minted now (with an empty body, as the console mints) would carry, in the order
   * clients try them, without minting anything: the relay socket, the API server, Secure Link's pinned
   * origin, and Reach while it is connected (its one-use credential is made only at mint).
   */
  routePreview(): RouteCandidateRow[] {
    const relayUrl = this.advertisedUrl();
    const api = this.apiServer({});
    const unreachable = (host: string) => (isLoopbackHost(host) ? 'a loopback address: no phone can dial it' : null);
    const rows: RouteCandidateRow[] = [
      {
        role: 'relay',
        label: 'Relay socket',
        url: relayUrl,
        security: this.config.tls ? 'tls' : 'plain',
        recommended: !this.runtime.secureLink,
        note: unreachable(new URL(relayUrl).hostname.replace(/^\[|\]$/g, '')),
      },
      {
        role: 'api_server',
        label: 'API server (chat)',
        url: `${api.tls ? 'https' : 'http'}://${urlHost(api.host)}:${api.port}`,
        security: api.tls ? 'tls' : 'plain',
        recommended: false,
        note: unreachable(api.host) ?? (api.key ? null : 'no API key: the QR carries none'),
      },
    ];
    const secureLink = this.runtime.secureLink;
    if (secureLink)
      rows.push({
        role: 'plugin_proxy',
        label: 'Secure Link',
        url: secureLink.url,
        security: 'pinned_tls',
        recommended: true,
        note: isLoopbackHost(new URL(secureLink.url).hostname) ? 'a loopback address: phones reach it only through Reach' : null,
      });
    const reach = this.runtime.reach;
    if (secureLink && reach?.connected)
      rows.push({
        role: 'outbound_broker',
        label: 'Reach (experimental)',
        url: reach.connectUrl,
        security: 'e2ee_pinned_tls',
        recommended: false,
        note: 'a one-use credential is published to the broker when the code is minted; tried after the other routes',
      });
    return rows;
  }

  /**
   * Why no phone could use a QR minted now that names `relayUrl` (the advertised socket by default), or
   * null: phone-reach.ts, over the routes the QR would also carry (Secure Link, Reach while connected).
   */
  phoneWarning(relayUrl = this.advertisedUrl()): string | null {
    const secureLink = this.runtime.secureLink;
    const reach = this.runtime.reach;
    const others = [...(secureLink ? [secureLink.url] : []), ...(secureLink && reach?.connected ? [reach.connectUrl] : [])];
    return unreachableQrWarning(relayUrl, others, lanAddress());
  }

  /** The URL a phone should dial: the bind host, or this machine's first LAN address for 0.0.0.0. */
  advertisedUrl(): string {
    const scheme = this.config.tls ? 'wss' : 'ws';
    return `${scheme}://${urlHost(advertisedHost(this.config.host))}:${this.runtime.port}`;
  }
}

/** A pairing code or request as `/pairing/pending` and the console list it (never the code itself). */
export function describePairing(c: PairingCode) {
  return {
    request_id: c.requestId,
    state: c.state,
    source: c.source,
    created_at: epoch(c.registeredAt),
    expires_at: epoch(c.expiresAt),
    ip: c.ip,
    device_name: c.deviceName,
  };
}

function wireGrants(terms: PairingTerms): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(terms.grants)) out[k] = v ?? 0;
  return out;
}

export type MintInput = TermsInput & {
  dashboard_url?: string;
  api_key?: string;
  relay_url?: string;
  host?: string;
  port?: number;
  tls?: boolean;
  endpoints?: Record<string, unknown>[];
};

/** Endpoint candidates go into the signed QR as sent; only their size and outline are checked here. */
function checkEndpoints(list: Record<string, unknown>[]): Record<string, unknown>[] {
  for (const e of list) {
    if (typeof e.role !== 'string' || !/^[A-Za-z0-9_.:-]{1,32}$/.test(e.role)) {
      throw new DomainError('validation.endpoints', 'invalid', 'endpoints: each needs a role of 1-32 letters, digits or _.:-');
    }
  }
  if (JSON.stringify(list).length > 8192) throw new DomainError('validation.endpoints', 'invalid', 'endpoints: at most 8 KiB of JSON');
  return list;
}

/**
 * The QR's endpoint candidates with this relay's Secure Link origin among them (replacing any the caller
 * sent as `plugin_proxy`), in the reference's order (tailscale, public, plugin_proxy, others, lan,
 * brokers) and renumbered: `priority` is the index.
 */
export function withSecureLink(
  list: Record<string, unknown>[] | undefined,
  candidate: Record<string, unknown> | null,
): Record<string, unknown>[] | undefined {
  if (!candidate) return list;
  const all = [...(list ?? []).filter((e) => e.role !== 'plugin_proxy'), candidate];
  const rank = (e: Record<string, unknown>) =>
    ({ tailscale: 0, public: 1, plugin_proxy: 2, lan: 4, outbound_broker: 5, broker: 5, relay_broker: 5 })[String(e.role)] ?? 3;
  return all
    .map((e, i) => ({ e, i }))
    .sort((a, b) => rank(a.e) - rank(b.e) || a.i - b.i)
    .map(({ e }, i) => ({ ...e, priority: i }));
}
