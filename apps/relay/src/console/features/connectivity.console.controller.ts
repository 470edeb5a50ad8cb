import { Body, Controller, Get, HttpCode, Inject, Post } from '@nestjs/common';
import type { ConnectivityView, ListenerView, PreflightAnswer, PreflightCheckRow, ReachView, SecureLinkView } from '@svc/console-api';
import { DomainError, epoch } from '@svc/domain';
import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Auth } from '../../common/auth/auth';
import { Clock } from '../../common/loop/clock';
import { CommandLoop } from '../../common/loop/command-loop';
import type { RelayConfig } from '../../common/config/relay-config';
import { isBindAll, isLoopbackHost, lanAddress, urlHost } from '../../common/config/hosts';
import { RELAY_CONFIG, RUNTIME, type Runtime } from '../../common/auth/tokens';
import { PairingService } from '../../pairing/pairing.service';
import { SecureLinkPreflight } from '../../secure-link/secure-link-preflight';
import { secureLinkStatus } from '../../secure-link/secure-link-status';
import { ConsoleFeatures } from '../console-features';
import { ConnectivityPreflightDto } from './connectivity.dto';

/** The whole preflight's bound (its trial listen has its own, shorter one). */
export const PREFLIGHT_TIMEOUT_MS = 3000;

const DAY_MS = 86_400_000;
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);

/**
 * Connectivity page: how phones reach the relay. Its listener and TLS, Secure Link (origin, pin, expiry,
 * the last identity change), Reach (state, broker, last change), the routes a QR minted now would carry,
 * and a preflight of a host and port for Secure Link (the relay's own check: it listens for a moment on
 * an address of this machine, it never connects to what it is given).
 */
@Controller('/console/api/connectivity')
export class ConnectivityConsoleController {
  constructor(
    features: ConsoleFeatures,
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    private readonly pairing: PairingService,
    private readonly secureLinkPreflight: SecureLinkPreflight,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(RUNTIME) private readonly runtime: Runtime,
  ) {
    features.add({ id: 'connectivity', title: 'Connectivity', order: 25 });
  }

  @Get()
  @Auth('operator')
  view(): ConnectivityView {
    return {
      ok: true,
      server_time: epoch(this.clock.now()),
      listener: this.listener(),
      secure_link: this.secureLink(),
      reach: this.reach(),
      routes: this.pairing.routePreview(),
    };
  }

  /** What `host` and `port` would mean for Secure Link at its next start; read-only, bounded by PREFLIGHT_TIMEOUT_MS. */
  @Post('/preflight')
  @Auth('operator')
  @HttpCode(200)
  async preflight(@Body() body: ConnectivityPreflightDto): Promise<PreflightAnswer> {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new DomainError('connectivity.preflight_timeout', 'timeout', `the preflight took longer than ${PREFLIGHT_TIMEOUT_MS} ms`)),
        PREFLIGHT_TIMEOUT_MS,
      );
    });
    const report = await Promise.race([this.secureLinkPreflight.check(body.host, body.port ?? null), timeout]).finally(() => clearTimeout(timer));
    const p = report.proposed!;
    const sl = this.config.secureLink;
    const checks: PreflightCheckRow[] = [
      {
        id: 'address',
        ok: p.bindable,
        detail: p.bindable
          ? isBindAll(p.host)
            ? 'every interface of this machine'
            : `an address of this machine${isLoopbackHost(p.host) ? ' (loopback: phones reach it only through Reach)' : ''}`
          : (p.bind_note ?? 'not an address of this machine'),
      },
      {
        id: 'port',
        ok: p.port_note ? true : p.port_free,
        detail:
          p.port_note ??
          (p.port_free === true
            ? `port ${p.port} is free`
            : p.bindable
              ? (p.bind_note ?? `port ${p.port} is in use`)
              : `port ${p.port} not tried: the address is not one this machine can listen on`),
      },
      {
        id: 'identity',
        ok: p.identity_covers_host ?? true,
        detail:
          p.identity_covers_host === null
            ? `no identity yet: one is made for ${p.advertised_host} when Secure Link starts`
            : p.identity_covers_host
              ? `the identity covers ${p.advertised_host}`
              : sl.cert
                ? `the operator certificate does not cover ${p.advertised_host}: Secure Link would not start`
                : `the identity does not cover ${p.advertised_host}: a new one means pairing every phone again`,
      },
      ...report.checks.filter((c) => c.id !== 'identity').map((c) => ({ id: c.id, ok: c.ok, detail: c.detail })),
    ];
    return {
      ok: true,
      server_time: epoch(this.clock.now()),
      host: p.host,
      port: p.port,
      verdict: checks.some((c) => c.ok === false) ? 'problems' : checks.some((c) => c.ok === null) ? 'unknown' : 'ready',
      candidate_url: `https://${urlHost(p.advertised_host)}:${p.port}`,
      checks,
      restart_required: p.restart_required,
      re_pair_required: p.re_pair_required,
      took_ms: Math.round(performance.now() - started),
    };
  }

  private listener(): ListenerView {
    const host = this.config.host;
    let tlsCert: ListenerView['tls_cert'] = null;
    if (this.config.tls) {
      try {
        const notAfter = new Date(new X509Certificate(fs.readFileSync(this.config.tls.cert)).validTo);
        tlsCert = { not_after: notAfter.toISOString(), days_left: Math.floor((notAfter.getTime() - this.clock.now().getTime()) / DAY_MS) };
      } catch {
        tlsCert = null;
      }
    }
    return {
      host,
      port: this.runtime.port,
      url: this.runtime.url,
      advertised_url: this.pairing.advertisedUrl(),
      bind_all: isBindAll(host),
      loopback_only: isLoopbackHost(host),
      lan_address: lanAddress(),
      phone_warning: this.pairing.phoneWarning(),
      tls: this.config.tls !== null,
      tls_cert: tlsCert,
    };
  }

  private secureLink(): SecureLinkView {
    const sl = this.config.secureLink;
    const running = this.runtime.secureLink ?? null;
    const state = this.loop.models.secureLink.state;
    const id = running?.identityView() ?? {};
    const notAfter = str(id.not_after);
    return {
      enabled: sl.enabled,
      status: secureLinkStatus(this.runtime, sl.enabled),
      url: running?.url ?? null,
      host: sl.host,
      port: sl.port,
      pin: str(id.pin_sha256),
      source: id.source === 'generated' || id.source === 'operator' ? id.source : null,
      subject_alt_names: Array.isArray(id.subject_alt_names) ? id.subject_alt_names.filter((x): x is string => typeof x === 'string') : [],
      not_after: notAfter,
      days_left: notAfter === null ? null : Math.floor((Date.parse(notAfter) - this.clock.now().getTime()) / DAY_MS),
      last_error: running ? null : state.reason,
      identity_changed_at: state.changedAt === null ? null : epoch(state.changedAt),
      previous_pin: state.previousPin,
    };
  }

  private reach(): ReachView {
    const r: Record<string, unknown> = this.runtime.reach?.status() ?? this.runtime.reachStatus ?? { enabled: false, state: 'disabled' };
    const logged = this.loop.models.secureLink.state.reach;
    return {
      enabled: r.enabled === true,
      state: str(r.state) ?? 'disabled',
      broker_url: str(r.broker_url),
      host_id: str(r.host_id),
      connected_at: num(r.connected_at),
      last_change: logged.state === 'disabled' ? null : logged.state,
      last_change_at: logged.at === null ? null : epoch(logged.at),
      last_error: str(r.last_error),
      active_streams: num(r.active_streams),
    };
  }
}
