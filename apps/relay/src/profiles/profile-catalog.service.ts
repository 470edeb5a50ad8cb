import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { ProfileCatalogChanged, ProfileCatalogEntry } from '@svc/events';
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import { Clock } from '../common/loop/clock';
import { CommandLoop } from '../common/loop/command-loop';
import type { RelayConfig } from '../common/config/relay-config';
import { onConfigRejected } from '../common/agent-config/config-yaml';
import { Scheduler } from '../common/loop/scheduler';
import { LOGGER, RELAY_CONFIG } from '../common/auth/tokens';
import { AuthOkFields } from '../phone-socket/auth-ok-fields';
import { PhoneHub } from '../phone-socket/phone-hub.service';
import { ProfileLayout } from './profile-layout';
import { enableRelayPlugin, relayPluginName, type EnableResult } from './profile-relay-plugin';
import { scanProfiles, type ProfileRow, type ScannedProfile } from './profile-row';

/** The SOUL text all rows of one auth.ok may carry together. */
export const MAX_SOULS_IN_ROWS = 256 * 1024;
/** How often the profile tree is looked at again (the reference's 30 s). */
export const PROFILE_RESCAN_MS = 30_000;

/**
 * The profiles phones are offered: scanned from the service home at start, every 30 s (on the injected
 * clock), and at once after a write through the relay or an enablement. A scan that differs from the
 * catalog in the log (a row's digest, a profile added or gone, a relay-plugin state) appends
 * `profile.catalog_changed`; phones get the rows in `auth.ok` and hear of a change from the bus
 * (`pairing/profiles.updated`). The rows stay here, in memory: they are derived from the files, and the
 * log keeps only their digests.
 *
 * Phones are offered every profile with a readable config except those whose config disables the relay
 * (`plugins.disabled: [svc-relay]`): the operator said that agent is not for the relay.
 */
@Injectable()
export class ProfileCatalog implements OnApplicationBootstrap, OnModuleDestroy {
  readonly layout: ProfileLayout;
  private scanned: ScannedProfile[] = [];
  private lastScanAt = 0;
  private running: Promise<void> | null = null;
  private again = false;
  private sub: Subscription | null = null;
  private broadcastSub: Subscription | null = null;
  private stopWarnings: (() => void) | null = null;

  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    scheduler: Scheduler,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly hub: PhoneHub,
    authOk: AuthOkFields,
  ) {
    this.layout = new ProfileLayout(config.svcHome, config.svcConfigPath);
    authOk.add(() => ({ profiles: this.rows() }));
    scheduler.onTick(() => {
      if (this.config.profileDiscovery && this.clock.now().getTime() - this.lastScanAt >= PROFILE_RESCAN_MS) return this.rescan('rescan');
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    // A config the relay refuses (too large, too deep, not a mapping...) is named in the operator's log
    // once per version of the file, whoever read it first (this scan, a voice request, a profile route).
    this.stopWarnings = onConfigRejected((r) =>
      this.logger.warn({ file: r.file, problem: r.problem, reason: r.reason }, 'config file skipped: the relay does not read it'),
    );
    // Every authenticated phone hears of a change (after it is durable). The app reads the array at the
    // envelope's top level; it is in the payload too, where the reference relay put it.
    this.broadcastSub = this.loop.bus.ofType('profile.catalog_changed').subscribe(() => {
      const profiles = this.rows();
      for (const c of this.hub.authenticated()) c.send('pairing', 'profiles.updated', { profiles }, undefined, { profiles });
    });
    this.sub = this.loop.bus.ofType('profile.file_written').subscribe(() => void this.rescan('file_written'));
    if (this.config.profileDiscovery) await this.rescan('startup');
  }

  onModuleDestroy(): void {
    this.sub?.unsubscribe();
    this.broadcastSub?.unsubscribe();
    this.stopWarnings?.();
  }

  /** The rows phones get (`auth.ok.profiles`, `profiles.updated`), in catalog order. */
  rows(): ProfileRow[] {
    // Every SOUL rides along in auth.ok: past 256 KiB of them, the rest go without (the app reads one
    // through GET /api/profiles/{name}/soul when it needs it), so a host with many large SOULs does not
    // make every authentication megabytes long.
    let budget = MAX_SOULS_IN_ROWS;
    return this.scanned
      .filter((p) => p.row !== null && p.relay !== 'disabled')
      .map((p) => {
        const row = p.row!;
        const size = row.system_message ? Buffer.byteLength(row.system_message) : 0;
        if (size <= budget) {
          budget -= size;
          return row;
        }
        budget = 0;
        return { ...row, system_message: null };
      });
  }

  /** Every profile with its relay-plugin state (the operator's view: `svc relay profiles list`). */
  all(): ScannedProfile[] {
    return this.scanned;
  }

  /**
   * Scans now (one scan at a time; a request during a scan runs one more after it) and records a change.
   * Never throws: a failed scan is logged and the previous catalog stays.
   */
  async rescan(reason: ProfileCatalogChanged['data']['reason']): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.scanOnce(reason);
        } catch (err) {
          this.logger.warn({ err: (err as Error).message }, 'profile scan failed; the previous catalog stays');
        }
      } while (this.again);
    })().finally(() => (this.running = null));
    return this.running;
  }

  private async scanOnce(reason: ProfileCatalogChanged['data']['reason']): Promise<void> {
    this.lastScanAt = this.clock.now().getTime();
    const scanned = await scanProfiles(this.layout, this.config.webapiUrl);
    this.scanned = scanned;
    const entries: ProfileCatalogEntry[] = scanned.map((p) => ({ name: p.name, relay: p.relay, sha256: p.sha256 }));
    const offered = this.rows().length;
    await this.loop.run('system', (m) =>
      sameCatalog(m.profiles.entries(), entries) ? [] : [{ type: 'profile.catalog_changed', data: { reason, profiles: entries, offered } }],
    );
  }

  /**
   * `svc relay profiles enable`: the relay plugin added to each named profile's config (every profile when
   * `names` is empty), one `profile.relay_enabled` per file changed, then a rescan. Unknown names are
   * refused before anything is written.
   */
  async enable(names: string[], dryRun: boolean, actor: string): Promise<Array<EnableResult & { error?: string }>> {
    const known = this.layout.names();
    const wanted = names.length ? names : known;
    const results: Array<EnableResult & { error?: string }> = [];
    for (const name of wanted) {
      try {
        const r = enableRelayPlugin(name, this.layout.configOf(name), dryRun, relayPluginName(this.config.clientSpelling));
        if (r.changed && !dryRun && r.was !== 'enabled')
          await this.loop.run(actor, () => [
            {
              type: 'profile.relay_enabled',
              data: {
                profile: name,
                file: name === 'default' ? 'config.yaml' : `profiles/${name}/config.yaml`,
                was: r.was as 'disabled' | 'absent',
                sha256: r.sha256!,
                bytes: r.bytes!,
                backup: `${name === 'default' ? '' : `profiles/${name}/`}config.yaml.bak`,
              },
            },
          ]);
        results.push(r);
      } catch (err) {
        results.push({ profile: name, file: this.layout.configOf(name), was: 'absent', changed: false, error: (err as Error).message });
      }
    }
    if (!dryRun && results.some((r) => r.changed)) await this.rescan('relay_enabled');
    return results;
  }
}

function sameCatalog(a: readonly ProfileCatalogEntry[], b: readonly ProfileCatalogEntry[]): boolean {
  return a.length === b.length && a.every((x, i) => x.name === b[i].name && x.relay === b[i].relay && x.sha256 === b[i].sha256);
}
