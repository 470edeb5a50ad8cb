import { Controller, Get, Inject, Module } from '@nestjs/common';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Auth } from '../common/auth';
import { Clock } from '../common/clock';
import type { RelayConfig } from '../common/config';
import { CommandLoop } from '../common/command-loop';
import { RELAY_CONFIG, RUNTIME, type Runtime } from '../common/tokens';
import { BridgeModule } from '../bridge/bridge.module';
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

  /** Profiles with a config under `$SVC_HOME/profiles/` (names only; relay enablement is issue 14's). */
  private profiles(): Array<{ name: string; relay_state: string }> {
    const dir = path.join(this.config.svcHome, 'profiles');
    let names: string[] = [];
    try {
      names = fs.readdirSync(dir);
    } catch {
      return [];
    }
    return names
      .filter((n) => PROFILE_NAME_RE.test(n) && fs.existsSync(path.join(dir, n, 'config.yaml')))
      .sort()
      .slice(0, 200)
      .map((name) => ({ name, relay_state: 'available' }));
  }
}

@Module({ imports: [BridgeModule], controllers: [RelayInfoController] })
export class OperatorModule {}
