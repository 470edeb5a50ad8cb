import { useEffect, useLayoutEffect, useRef } from 'react';
import type { ConsoleFeature } from '@/lib/feature';
import { Link } from '@/lib/router';

/** The page a path belongs to (the overview only at `/`). */
export function isCurrent(f: ConsoleFeature, path: string): boolean {
  return f.path === '/' ? path === '/' : path === f.path || path.startsWith(`${f.path}/`);
}

/**
 * Every page, in nav order: the side tabs on a wide screen; on a phone the same list drops down under the
 * top bar from its Menu button (`menu`), with the current page focused, and closes on a choice or Escape
 * (which gives the focus back to the button).
 */
export function SideNav({ features, current, menu }: { features: ConsoleFeature[]; current: string; menu?: { id: string; onClose: () => void } }) {
  const list = useRef<HTMLUListElement>(null);
  const onClose = useRef(menu?.onClose);
  useLayoutEffect(() => {
    onClose.current = menu?.onClose;
  });
  const id = menu?.id;
  useEffect(() => {
    if (id === undefined) return;
    list.current?.querySelector<HTMLElement>('[aria-current="page"]')?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      onClose.current?.();
      // Back to the button that opened it, so the keyboard carries on from there.
      document.querySelector<HTMLElement>(`[aria-controls="${id}"]`)?.focus();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [id]);
  return (
    <nav className={menu ? 'menu-panel' : 'sidenav'} id={menu?.id} aria-label="Console sections">
      <ul className="sidenav-inner" ref={list}>
        {features.map((f) => {
          const active = isCurrent(f, current);
          const Icon = f.icon;
          return (
            <li key={f.id}>
              <Link to={f.path} className={`nav-link ${active ? 'active' : ''}`} aria-current={active ? 'page' : undefined} onClick={menu?.onClose}>
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
