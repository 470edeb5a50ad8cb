import { useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from 'react';

/** Client routes live under /console/; the relay answers every such path with index.html. */
export const BASE = '/console';

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => listeners.forEach((l) => l()));

function subscribe(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

const snapshot = (): string => location.pathname + location.search;

/** `search` is a string, stable across renders: memoise on it, not on `params`. */
export type Location = { path: string; search: string; params: URLSearchParams };

export function useLocation(): Location {
  const full = useSyncExternalStore(subscribe, snapshot);
  const url = new URL(full, location.origin);
  const path = url.pathname.startsWith(BASE) ? url.pathname.slice(BASE.length) || '/' : '/';
  return { path: path.length > 1 ? path.replace(/\/$/, '') : path, search: url.search, params: url.searchParams };
}

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  const url = BASE + (to.startsWith('/') ? to : `/${to}`);
  if (url === snapshot()) return;
  if (opts.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  listeners.forEach((l) => l());
  if (!opts.replace) window.scrollTo({ top: 0 });
}

type LinkProps = Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'> & { to: string };

/** A real link (middle-click and copy work) that navigates in place on a plain click. */
export function Link({ to, onClick, ...rest }: LinkProps) {
  const handle = (e: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(e);
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  };
  return <a href={BASE + to} onClick={handle} {...rest} />;
}
