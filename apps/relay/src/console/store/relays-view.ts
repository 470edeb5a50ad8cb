import type { RelaysView } from '@svc/console-api';
import { DomainError, epoch } from '@svc/domain';
import type { CommandLoop } from '../../common/loop/command-loop';
import type { RelayConfig } from '../../common/config/relay-config';

/**
 * The Store page's Relays card: every relay on the PostgreSQL database (svc_relay_members) with its role,
 * epoch, lag and when it was last seen on this relay's clock, and the newest takeovers from the log.
 */
export async function relaysView(loop: CommandLoop, config: RelayConfig, nowMs: number, selfUrl: string): Promise<RelaysView> {
  // A leader writes its row every third of the lease, a standby every poll: past the longer of the lease and
  // two polls it missed beats (stopped, frozen, or cut off from the database).
  const staleAfterMs = Math.max(config.standby.leaseMs, 2 * config.standby.pollMs);
  const base = {
    ok: true as const,
    server_time: epoch(nowMs),
    stale_after_seconds: staleAfterMs / 1000,
    forget_after_seconds: config.standby.forgetMembersMs / 1000,
  };
  const pending = loop.relays();
  if (!pending) return { ...base, supported: false, relays: [], history: [] };
  const read = await pending.catch(() => {
    // The pg error text may name the server; the answer says only what failed.
    throw new DomainError('store.unreachable', 'unavailable', 'the event store database did not answer; try again');
  });
  return {
    ...base,
    supported: true,
    relays: read.members.map((m) => {
      const ago = Math.max(0, nowMs - m.seenAt);
      return {
        name: m.name,
        url: m.url,
        role: m.role,
        epoch: m.epoch,
        seq: m.seq,
        lag_records: m.lagRecords,
        lag_ms: m.lagMs,
        seen_at: epoch(m.seenAt),
        seen_seconds_ago: Math.floor(ago / 1000),
        stale: ago > staleAfterMs,
        self: m.url !== null && m.url === selfUrl,
      };
    }),
    history: read.history.map((h) => ({
      seq: h.seq,
      at: epoch(Date.parse(h.at)),
      epoch: h.epoch,
      previous_epoch: h.previousEpoch,
      holder: h.holder,
    })),
  };
}
