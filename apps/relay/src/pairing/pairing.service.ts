import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import {
  approvePairing,
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
  type TermsInput,
} from '@svc/domain';
import type { PairingTerms } from '@svc/events';
import { randomUUID } from 'node:crypto';
import * as os from 'node:os';
import type { Logger } from 'pino';
import { Clock } from '../common/clock';
import type { RelayConfig } from '../common/config';
import { EventLog } from '../common/event-log';
import { Scheduler } from '../common/scheduler';
import { Secrets, secureRandomBytes } from '../common/secrets';
import { LOGGER, RELAY_CONFIG, RUNTIME, type Runtime } from '../common/tokens';
import { canonicalJson, pairingUrl, type QrPayload } from './qr-payload';

const epoch = (iso: string | number): number => Math.floor((typeof iso === 'number' ? iso : Date.parse(iso)) / 1000);

@Injectable()
export class PairingService implements OnApplicationBootstrap {
  constructor(
    private readonly log: EventLog,
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
    const [stored] = await this.log.run('operator', (m, now) => registerCode(m, { codeDigest: this.secrets.digest(code), source, terms }, now));
    const expiresAt = stored.type === 'pairing.code_registered' ? stored.data.expiresAt : this.clock.now().toISOString();
    return { code, terms, expires_at: epoch(expiresAt) };
  }

  async mint(input: TermsInput & { dashboard_url?: string; api_key?: string; relay_url?: string }) {
    const terms = pairingTerms(input);
    let registered: { code: string; expires_at: number } | null = null;
    for (let attempt = 0; !registered; attempt++) {
      try {
        registered = await this.register(codeFromBytes(secureRandomBytes(16)), input, 'mint');
      } catch (err) {
        if (attempt > 3) throw err;
      }
    }
    const relayUrl = input.relay_url ?? this.advertisedUrl();
    const apiKey = input.api_key ?? this.config.apiServer.key;
    const unsigned: Omit<QrPayload, 'sig'> = {
      svc: 1,
      relay: {
        url: relayUrl,
        code: registered.code,
        ...(input.ttl_seconds !== undefined ? { ttl_seconds: input.ttl_seconds } : {}),
        ...(input.grants ? { grants: wireGrants(terms) } : {}),
        ...(terms.transportHint ? { transport_hint: terms.transportHint } : {}),
      },
      ...(input.dashboard_url ? { dashboard_url: input.dashboard_url } : {}),
      ...(this.config.apiServer.enabled && apiKey ? { api: { url: this.config.apiServer.url, key: apiKey } } : {}),
    };
    const payload: QrPayload = { ...unsigned, sig: this.secrets.mac('qr', canonicalJson(unsigned)) };
    return {
      ok: true as const,
      code: registered.code,
      qr_payload: payload,
      pairing_url: pairingUrl(payload),
      expires_at: registered.expires_at,
      relay_url: relayUrl,
      ...(input.dashboard_url ? { dashboard_url: input.dashboard_url } : {}),
    };
  }

  /** `POST /pairing`: a pending code; the operator approves or denies it. */
  async request(ip: string, deviceName: string | null) {
    const code = codeFromBytes(secureRandomBytes(16));
    const requestId = randomUUID();
    const [stored] = await this.log.run(`public:${ip}`, (m, now) =>
      requestPairing(m, { codeDigest: this.secrets.digest(code), requestId, ip, deviceName }, now),
    );
    const expiresAt = stored.type === 'pairing.requested' ? stored.data.expiresAt : '';
    return { ok: true as const, code, request_id: requestId, status: 'pending', expires_at: epoch(expiresAt) };
  }

  async approve(ref: { code?: string; request_id?: string }, input: TermsInput, by: Principal) {
    const terms = pairingTerms(input);
    const codeDigest = ref.code ? this.secrets.digest(requireCode(ref.code)) : undefined;
    const [stored] = await this.log.run(actorOf(by), (m, now) => approvePairing(m, { requestId: ref.request_id, codeDigest }, terms, now));
    return { ok: true as const, request_id: stored.type === 'pairing.approved' ? stored.data.requestId : null, status: 'approved' };
  }

  async deny(ref: { code?: string; request_id?: string }, by: Principal) {
    const codeDigest = ref.code ? this.secrets.digest(requireCode(ref.code)) : undefined;
    const [stored] = await this.log.run(actorOf(by), (m, now) => denyPairing(m, { requestId: ref.request_id, codeDigest }, now));
    return { ok: true as const, request_id: stored.type === 'pairing.denied' ? stored.data.requestId : null, status: 'denied' };
  }

  /** Live codes and pending requests, without the codes themselves (for the operator). */
  pending(): Array<ReturnType<typeof describePairing>> {
    return this.log.models.pairing.live(this.clock.now()).map(describePairing);
  }

  /** The URL a phone should dial: the bind host, or this machine's first LAN address for 0.0.0.0. */
  advertisedUrl(): string {
    const scheme = this.config.tls ? 'wss' : 'ws';
    let host = this.config.host;
    if (host === '0.0.0.0' || host === '::') host = lanAddress() ?? '127.0.0.1';
    if (host.includes(':')) host = `[${host}]`;
    return `${scheme}://${host}:${this.runtime.port}`;
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

function lanAddress(): string | null {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return null;
}
