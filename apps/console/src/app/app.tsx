import { useEffect, useMemo, useState } from 'react';
import { useOverview } from '@/features/overview/api/get-overview';
import { EmptyState } from '@/components/ui';
import { Link, useLocation } from '@/lib/router';
import { FEATURES } from './features';
import { SideNav, isCurrent } from './layout/side-nav';
import { StreamBanner } from './layout/stream-banner';
import { Ticker } from './layout/ticker';
import { TopBar } from './layout/top-bar';

const MENU_ID = 'console-menu';

export function App() {
  const { path } = useLocation();
  const overview = useOverview();
  // Only pages whose API this relay serves; until the relay answers, show the pages of this build.
  const features = useMemo(() => {
    const served = overview.data?.features.map((f) => f.id);
    return served ? FEATURES.filter((f) => served.includes(f.id)) : FEATURES;
  }, [overview.data]);
  const current = features.find((f) => isCurrent(f, path));
  const [menuOpen, setMenuOpen] = useState(false);

  useEffect(() => {
    document.title = `${current?.title ?? 'Not found'} · svc relay`;
  }, [current]);

  const Page = current?.Page;
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <TopBar
        title={current?.title ?? 'Not found'}
        menu={{ id: MENU_ID, open: menuOpen, toggle: () => setMenuOpen((o) => !o) }}
        menuPanel={menuOpen ? <SideNav features={features} current={path} menu={{ id: MENU_ID, onClose: () => setMenuOpen(false) }} /> : null}
      />
      <StreamBanner />
      <div className="body">
        <SideNav features={features} current={path} />
        <main id="main" className="main" tabIndex={-1}>
          {Page ? (
            <Page />
          ) : (
            <EmptyState title="No such page" action={<Link to="/">Back to the overview</Link>}>
              The console has no page at {path}.
            </EmptyState>
          )}
        </main>
        <Ticker />
      </div>
    </div>
  );
}
