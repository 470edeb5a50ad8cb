import type { ConsoleFeature } from '@/lib/feature';
import { Link } from '@/lib/router';

export function SideNav({ features, current }: { features: ConsoleFeature[]; current: string }) {
  return (
    <nav className="sidenav" aria-label="Console sections">
      <ul className="sidenav-inner">
        {features.map((f) => {
          const active = f.path === '/' ? current === '/' : current === f.path || current.startsWith(`${f.path}/`);
          const Icon = f.icon;
          return (
            <li key={f.id}>
              <Link to={f.path} className={`nav-link ${active ? 'active' : ''}`} aria-current={active ? 'page' : undefined}>
                <Icon />
                <span>{f.title}</span>
                {f.Badge ? <f.Badge /> : null}
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
