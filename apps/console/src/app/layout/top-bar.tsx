import type { ReactNode } from 'react';
import type { Overview } from '@svc/console-api';
import { useOverview } from '@/features/overview/api/get-overview';
import { IconClose, IconMenu, IconMoon, IconSun, IconSystem } from '@/components/icons';
import { provenFrom } from '@/lib/chain-proof';
import { plural } from '@/lib/format';
import { useLive } from '@/lib/live-context';
import { Link } from '@/lib/router';
import { signOut } from '@/lib/sign-in';
import { useTheme } from '@/lib/theme';

/** How phones reach the relay: Secure Link when it serves them, else the listener's TLS. */
function TransportFact({ o }: { o: Overview }) {
  const sl = o.secure_link;
  if (sl.status === 'available')
    return (
      <Link
        to="/connectivity"
        className="fact good"
        data-testid="transport"
        title={`phones connect through Secure Link at ${sl.url ?? '?'} (pinned TLS)`}
      >
        Secure Link
      </Link>
    );
  if (sl.status === 'unavailable')
    return (
      <Link to="/connectivity" className="fact bad" data-testid="transport" title="Secure Link is enabled but not running: see Connectivity">
        Secure Link down · {o.tls ? 'TLS on' : 'TLS off'}
      </Link>
    );
  return (
    <span className={`fact ${o.tls ? 'good' : 'muted'}`} data-testid="transport">
      {o.tls ? 'TLS on' : 'TLS off'}
    </span>
  );
}

/**
 * Always there: version, listen address, Secure Link or TLS, chain status, phones online, events per second.
 * On a phone it also names the current page, and its Menu button opens `menuPanel` (every page) below it.
 */
export function TopBar({ title, menu, menuPanel }: { title: string; menu: { id: string; open: boolean; toggle: () => void }; menuPanel: ReactNode }) {
  const o = useOverview().data;
  const live = useLive();
  const [theme, cycleTheme] = useTheme();
  const ThemeIcon = theme === 'light' ? IconSun : theme === 'dark' ? IconMoon : IconSystem;
  return (
    <header className="topbar">
      <button
        type="button"
        className="icon-btn menu-btn"
        aria-label="Menu"
        aria-expanded={menu.open}
        aria-controls={menu.id}
        onClick={menu.toggle}
        title={menu.open ? 'Close the list of pages' : 'All pages'}
      >
        {menu.open ? <IconClose /> : <IconMenu />}
      </button>
      <Link to="/" className="brand" aria-label="svc relay console, overview">
        <span className="brand-mark" aria-hidden>
          s
        </span>
        <span className="brand-name">svc relay</span>
      </Link>
      <span className="current-page" data-testid="current-page">
        {title}
      </span>
      <div
        className={`topbar-facts ${live.status === 'down' ? 'stale' : ''}`}
        aria-label="Relay status"
        title={live.status === 'down' ? 'last known values: the relay is unreachable' : undefined}
      >
        {o ? (
          <>
            <span className="fact hide-narrow">v{o.version}</span>
            <span className="fact mono hide-narrow">{`${o.listen.host}:${o.listen.port}`}</span>
            <TransportFact o={o} />
            {o.chain.state === 'verified' ? (
              <span
                className="fact good"
                title={`every record ${provenFrom(o.chain.from_seq, o.chain.cut)} up to #${o.chain.verified_to_seq} checked`}
                data-testid="chain-status"
              >
                chain ✓ #{o.chain.verified_to_seq}
              </span>
            ) : (
              <span className="fact bad" title={o.chain.reason} data-testid="chain-status">
                chain broken at #{o.chain.broken_at_seq}
              </span>
            )}
            <span className="fact" data-testid="phones-online">
              <span className={`dot ${o.phones_online ? 'dot-on' : 'dot-off'}`} aria-hidden /> {plural(o.phones_online, 'phone')} online
            </span>
            <span className="fact hide-narrow">{o.events_per_second.toFixed(1)} ev/s</span>
            {o.role ? (
              <span
                className={`fact ${o.role.role === 'leader' ? 'good' : 'bad'}`}
                data-testid="relay-role"
                title={
                  o.role.role === 'leader'
                    ? `this relay leads the PostgreSQL log (epoch ${o.role.epoch ?? '?'})`
                    : `hot standby: read-only, following the leader (${o.role.lag_records ?? 0} records behind, read ${Math.round((o.role.lag_ms ?? 0) / 100) / 10} s ago); it takes over when the leader stops`
                }
              >
                {o.role.role === 'leader' ? `leader · epoch ${o.role.epoch ?? '?'}` : `standby · read-only · epoch ${o.role.epoch ?? '?'}`}
              </span>
            ) : null}
          </>
        ) : (
          <span className="fact muted">connecting…</span>
        )}
      </div>
      <div className="topbar-end">
        <span
          className={`stream-pill stream-${live.status}`}
          title={live.status === 'live' ? `live from #${live.lastSeq ?? 0}` : 'event stream not connected'}
        >
          <span className="dot" aria-hidden /> {live.status === 'live' ? 'live' : live.status === 'connecting' ? 'connecting' : 'offline'}
        </span>
        <button type="button" className="icon-btn" onClick={cycleTheme} aria-label={`Theme: ${theme}. Switch theme`} title={`Theme: ${theme}`}>
          <ThemeIcon />
        </button>
        <button type="button" className="btn btn-ghost btn-sm" onClick={() => void signOut()} title="End this browser's console session">
          Sign out
        </button>
      </div>
      {menuPanel}
    </header>
  );
}
