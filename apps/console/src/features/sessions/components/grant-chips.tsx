import { grantNames } from '@svc/events/grant-channels';
import { Chip } from '@/components/ui';
import { duration, exact } from '@/lib/format';

/**
 * Grants grouped by expiry, one chip per group ("terminal, tui · 30d"), each channel's exact expiry on
 * hover. The four voice grants read as "voice" when they share one expiry.
 */
export function GrantChips({ grants, now }: { grants: Record<string, number | null>; now: number }) {
  const entries = Object.entries(grants);
  if (entries.length === 0) return <span className="muted">no grants</span>;
  const groups = new Map<number | null, string[]>();
  for (const [channel, until] of entries) groups.set(until, [...(groups.get(until) ?? []), channel]);
  const ordered = [...groups.entries()].sort(([a], [b]) => (a === null ? -1 : b === null ? 1 : b - a));
  return (
    <div className="chips">
      {ordered.map(([until, channels]) => {
        const sorted = channels.sort();
        const names = grantNames(sorted);
        const left = until === null ? null : until - now / 1000;
        const tone = left !== null && left <= 0 ? 'bad' : left !== null && left < 86400 ? 'warn' : 'neutral';
        const title = sorted.map((c) => `${c}: ${until === null ? 'as long as the session' : `until ${exact(until * 1000)}`}`).join('\n');
        return (
          <Chip key={String(until)} tone={tone} title={title}>
            {names.join(', ')}
            <span className="chip-sub">{left === null ? 'session' : left <= 0 ? 'expired' : duration(left)}</span>
          </Chip>
        );
      })}
    </div>
  );
}
