import { Inject, Injectable } from '@nestjs/common';
import { DomainError, modelCapabilities, secondsBetween } from '@svc/domain';
import type { Logger } from 'pino';
import { BridgeService } from '../bridge/bridge.service';
import { Clock } from '../common/loop/clock';
import { CommandLoop } from '../common/loop/command-loop';
import type { RelayConfig } from '../common/config/relay-config';
import { LOGGER, RELAY_CONFIG, RUNTIME, type Runtime } from '../common/auth/tokens';
import { ProfileCatalog } from '../profiles/profile-catalog.service';
import { REFERENCE_DEFAULT_NAME } from '../profiles/profile-layout';
import type { ModelCapabilitiesDto } from './relay-info.dto';
import { readUpdateFeed, type UpdateCheck } from './update-feed';

/** What this relay offers, by the names the app and the host's plugin read (`capabilities`). */
const CAPABILITIES = ['bridge', 'clipboard', 'media', 'notifications', 'proactive', 'relay_voice', 'terminal', 'tui'];
/** How long a feed's answer is kept. */
const UPDATE_CACHE_MS = 3_600_000;

/** The answers of RelayInfoController: counts and versions, never a token, path or credential. */
@Injectable()
export class RelayInfoService {
  private updateCache: { at: number; result: UpdateCheck } | null = null;

  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    private readonly bridge: BridgeService,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(RUNTIME) private readonly runtime: Runtime,
    private readonly catalog: ProfileCatalog,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  info() {
    const now = this.clock.now();
    const sessions = this.loop.models.sessions.count(now);
    return {
      version: this.runtime.version,
      plugin_version: this.runtime.version,
      protocol_version: 1,
      // Which brand the relay writes in schemes, markers, headers, paths and frame names (RELAY_CLIENT_SPELLING).
      client_spelling: this.config.clientSpelling,
      capabilities: CAPABILITIES,
      // Every profile with a config, and whether it enables the relay's plugin (`enabled`, `disabled`, `absent`).
      // `default` once more under the reference's name, which the app's diagnostics look up (profile-layout.ts).
      profiles: this.catalog
        .all()
        .flatMap((p) => [
          { name: p.name, relay_state: p.relay },
          ...(p.name === 'default' ? [{ name: REFERENCE_DEFAULT_NAME, relay_state: p.relay, alias_of: 'default' }] : []),
        ]),
      uptime_seconds: secondsBetween(this.runtime.startedAt, now),
      session_count: sessions,
      // Sessions are paired devices in this auth model (one session per pairing).
      paired_device_count: sessions,
      pending_commands: this.bridge.inFlight,
      media_entry_count: this.loop.models.media.count(),
      health: 'ok',
      // The agent gateway's heartbeat is not read by this relay: reported as unsupported, not guessed.
      gateway_heartbeat: { status: 'missing', supported: false, age_seconds: null },
    };
  }

  /**
   * Works offline: without a feed (`RELAY_UPDATE_FEED_URL`, a JSON document `{latest, update_command?}`)
   * the state is unknown, never an error status. `current` is then empty: the app shows "On v<current> —
   * up to date" for any non-empty `current` without `update_available` (AboutScreen.kt 308-312) and
   * "version status unavailable" for an empty one (DiagnosticsScreen.kt 710-725); the running version is
   * `running_version`. A feed answer is kept for an hour unless `force`.
   */
  async updateCheck(force: boolean) {
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
    if (!force && this.updateCache && now - this.updateCache.at < UPDATE_CACHE_MS) return this.updateCache.result;
    const result = await readUpdateFeed(feed, current, this.logger);
    this.updateCache = { at: now, result };
    return result;
  }

  /** One row per pair, in order. Never lists models, never reaches a provider or returns a credential. */
  modelCapabilities(body: ModelCapabilitiesDto) {
    if (body.schema_version !== 1)
      throw new DomainError(
        'unsupported_schema',
        'invalid',
        `schema_version must be 1, got ${JSON.stringify(body.schema_version ?? null).slice(0, 20)}`,
      );
    const pairs = body.models.map((m) => ({ provider: m.provider, model: m.model }));
    return { schema_version: 1, contract_version: '1.0', capabilities: modelCapabilities(pairs) };
  }
}
