import { Body, Controller, Get, HttpCode, Inject, Post, Query } from '@nestjs/common';
import { DomainError, modelCapabilities } from '@svc/domain';
import { Auth } from '../common/auth';
import { Clock } from '../common/clock';
import type { RelayConfig } from '../common/config';
import { CommandLoop } from '../common/command-loop';
import { LOGGER, RELAY_CONFIG, RUNTIME, type Runtime } from '../common/tokens';
import type { Logger } from 'pino';
import { readUpdateFeed, type UpdateCheck } from './update-feed';
import { ProfileCatalog } from '../profiles/profile-catalog.service';
import { BridgeService } from '../bridge/bridge.service';
import { PROFILE_NAME_RE } from '../voice/voice-config';

/** What this relay offers, by the names the app and the host's plugin read (`capabilities`). */
const CAPABILITIES = ['bridge', 'clipboard', 'media', 'notifications', 'proactive', 'relay_voice', 'terminal', 'tui'];

/**
 * `GET /relay/info` (spec 4.10): the build and capability summary. The spec lists it as loopback; the app
 * also asks it from the phone with its session bearer (RelayHttpClient.fetchRelayInfo, for its profile and
 * capability view), so a paired session may read it too. Counts only: never a token, path or credential.
 */
@Controller('/relay')
export class RelayInfoController {
  constructor(
    private readonly log: CommandLoop,
    private readonly clock: Clock,
    private readonly bridge: BridgeService,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(RUNTIME) private readonly runtime: Runtime,
    private readonly catalog: ProfileCatalog,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @Get('/info')
  @Auth('loopback-or-paired')
  info() {
    const now = this.clock.now();
    const sessions = this.log.models.sessions.count(now);
    return {
      version: this.runtime.version,
      plugin_version: this.runtime.version,
      protocol_version: 1,
      // Which brand the relay writes in schemes, markers, headers, paths and frame names (RELAY_CLIENT_SPELLING).
      client_spelling: this.config.clientSpelling,
      capabilities: CAPABILITIES,
      profiles: this.profiles(),
      uptime_seconds: Math.max(0, Math.floor((now.getTime() - this.runtime.startedAt.getTime()) / 1000)),
      session_count: sessions,
      // Sessions are paired devices in this auth model (one session per pairing).
      paired_device_count: sessions,
      pending_commands: this.bridge.inFlight,
      media_entry_count: this.log.models.media.count(),
      health: 'ok',
      // The agent gateway's heartbeat is not read by this relay: reported as unsupported, not guessed.
      gateway_heartbeat: { status: 'missing', supported: false, age_seconds: null },
    };
  }

  /**
   * `GET /relay/update-check[?refresh=1]` (spec 4.10; the app asks it too, with its bearer). Works offline:
   * without a feed (`RELAY_UPDATE_FEED_URL`, a JSON document `{latest, update_command?}`) the state is
   * unknown, never an error status. `current` is then empty: the app shows "On v<current> — up to date"
   * for any non-empty `current` without `update_available` (AboutScreen.kt 308-312) and "version status
   * unavailable" for an empty one (DiagnosticsScreen.kt 710-725); the running version is `running_version`.
   * A feed answer is kept for an hour.
   */
  @Get('/update-check')
  @Auth('loopback-or-paired')
  async updateCheck(@Query('refresh') refresh?: string) {
    const current = this.runtime.version;
    const now = this.clock.now().getTime();
    const feed = this.config.updateFeedUrl;
    if (!feed)
      return {
        current: '',
        running_version: current,
        latest: null,
        update_available: false,
        update_command: null,
        status: 'unknown',
        reason: 'no update feed is configured (RELAY_UPDATE_FEED_URL)',
      };
    const force = refresh === '1' || refresh === 'true';
    if (!force && this.updateCache && now - this.updateCache.at < 3_600_000) return this.updateCache.result;
    const result = await readUpdateFeed(feed, current, this.logger);
    this.updateCache = { at: now, result };
    return result;
  }

  private updateCache: { at: number; result: UpdateCheck } | null = null;

  /**
   * `POST /relay/model-capabilities` (spec 4.10, 2.5): loopback, or a paired phone with an active `chat`
   * grant. Schema 1, 1-64 `{provider, model}` pairs; one row per pair. Never lists models, never reaches a
   * provider or returns a credential (the clients fail soft on anything else).
   */
  @Post('/model-capabilities')
  @Auth('loopback-or-paired', 'chat')
  @HttpCode(200)
  capabilities(@Body() body: unknown) {
    const b = (typeof body === 'object' && body !== null && !Array.isArray(body) ? body : null) as Record<string, unknown> | null;
    if (!b) throw new DomainError('validation_failed', 'invalid', 'send {"schema_version": 1, "models": [{"provider", "model"}, ...]}');
    if (b.schema_version !== 1)
      throw new DomainError(
        'unsupported_schema',
        'invalid',
        `schema_version must be 1, got ${JSON.stringify(b.schema_version ?? null).slice(0, 20)}`,
      );
    if (b.profile !== undefined && b.profile !== null && (typeof b.profile !== 'string' || !PROFILE_NAME_RE.test(b.profile)))
      throw new DomainError('validation_failed', 'invalid', 'profile must be a profile name');
    if (b.refresh !== undefined && typeof b.refresh !== 'boolean')
      throw new DomainError('validation_failed', 'invalid', 'refresh must be true or false');
    const models = b.models;
    if (!Array.isArray(models) || models.length < 1 || models.length > 64)
      throw new DomainError(
        'validation_failed',
        'invalid',
        `models must be a list of 1 to 64 {provider, model} pairs${Array.isArray(models) ? `, got ${models.length}` : ''}`,
      );
    const pairs = models.map((m: unknown, i) => {
      const x = m as { provider?: unknown; model?: unknown };
      const ok = (v: unknown, max: number) => typeof v === 'string' && v.trim() !== '' && v.length <= max && !/[\x00-\x1f]/.test(v);
      if (typeof m !== 'object' || m === null || !ok(x.provider, 128) || !ok(x.model, 256))
        throw new DomainError(
          'validation_failed',
          'invalid',
          `models[${i}] must be {"provider": "...", "model": "..."} (at most 128 and 256 characters)`,
        );
      return { provider: x.provider as string, model: x.model as string };
    });
    return { schema_version: 1, contract_version: '1.0', capabilities: modelCapabilities(pairs) };
  }

  /** Every profile with a config, and whether it enables the relay's plugin (`enabled`, `disabled`, `absent`). */
  private profiles(): Array<{ name: string; relay_state: string }> {
    return this.catalog.all().map((p) => ({ name: p.name, relay_state: p.relay }));
  }
}
