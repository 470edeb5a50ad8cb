import { Chip } from '@/components/ui';
import { duration, exact } from '@/lib/format';

/** One chip per grant with its own expiry ("terminal · 6d"); "= session" when it lasts as long as the session. */
export function GrantChips({ grants, now }: { grants: Record<string, number | null>; now: number }) {
  const entries = Object.entries(grants).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return <span className="muted">no grants</span>;
  return (
    <div className="chips">
      {entries.map(([channel, until]) => {
        const left = until === null ? null : until - now / 1000;
        const tone = left !== null && left < 86400 ? 'warn' : 'neutral';
        return (
          <Chip key={channel} tone={tone} title={until === null ? `${channel}: as long as the session` : `${channel}: until ${exact(until * 1000)}`}>
            {channel}
            <span className="chip-sub">{left === null ? '∞' : duration(left)}</span>
          </Chip>
        );
      })}
    </div>
  );
}
