import { hasGrant } from '@svc/domain';
import type { TerminalCloseReason } from '@svc/events';
import { filter, map, merge, type Observable } from 'rxjs';
import type { Clock } from '../common/loop/clock';
import type { CommandLoop } from '../common/loop/command-loop';

export type ChannelLost = { tokenPrefix: string; reason: TerminalCloseReason };

/**
 * Sessions that lose `channel` (terminal, tui, bridge for MCP sessions): revoked, expired, the channel's grant expired, or a PATCH
 * that dropped it. What runs for such a session must stop, with this reason.
 */
export function channelLost(loop: CommandLoop, clock: Clock, channel: 'terminal' | 'tui' | 'bridge'): Observable<ChannelLost> {
  return merge(loop.bus.ofType('session.revoked', 'session.expired'), loop.bus.ofType('session.grant_expired', 'session.shortened')).pipe(
    map((e): ChannelLost | null => {
      const tokenPrefix = e.data.tokenPrefix;
      switch (e.type) {
        case 'session.revoked':
          return { tokenPrefix, reason: 'revoked' };
        case 'session.expired':
          return { tokenPrefix, reason: 'session_expired' };
        case 'session.grant_expired':
          return e.data.channel === channel ? { tokenPrefix, reason: 'grant_expired' } : null;
        case 'session.shortened': {
          const s = loop.models.sessions.byTokenPrefix(tokenPrefix);
          return s && hasGrant(s, channel, clock.now()) ? null : { tokenPrefix, reason: 'grant_removed' };
        }
      }
    }),
    filter((x): x is ChannelLost => x !== null),
  );
}
