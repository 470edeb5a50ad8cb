import { useSyncExternalStore } from 'react';
import type { SignInAnswer } from '@svc/console-api';
import { BASE } from './router';

/**
 * Whether this browser may use the console. The relay's answer decides: an API call refused with
 * `auth.operator_key_required` means the console's cookie is missing or ended, and the page turns into
 * the sign-in page. Optimistic at load (the first answer tells).
 */
export type SignInState = { signedIn: boolean; reason: string | null };

let state: SignInState = { signedIn: true, reason: null };
const listeners = new Set<() => void>();

function set(next: SignInState): void {
  state = next;
  listeners.forEach((l) => l());
}

export function markSignedOut(reason: string | null = null): void {
  if (!state.signedIn && state.reason === reason) return;
  set({ signedIn: false, reason });
}

export function useSignIn(): SignInState {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => state,
  );
}

/**
 * Opens a sign-in link (`/console/login#<ticket>`): the ticket leaves the address bar and the history
 * before it is sent, goes to the relay once as JSON, and the relay answers with the console's HttpOnly
 * cookie. The fragment never reached a server log or a Referer.
 */
export async function completeSignIn(): Promise<void> {
  if (location.pathname.replace(/\/$/, '') !== `${BASE}/login`) return;
  const ticket = location.hash.slice(1);
  history.replaceState(null, '', `${BASE}/`);
  if (!/^[A-Za-z0-9_-]{43}$/.test(ticket)) {
    markSignedOut('That sign-in link is incomplete: copy the whole link, including the part after #.');
    return;
  }
  let res: Response;
  try {
    res = await fetch(`${BASE}/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ ticket }),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch {
    markSignedOut('The relay did not answer: is it running?');
    return;
  }
  const body = (await res.json().catch(() => null)) as (SignInAnswer & { error?: string }) | { error?: string } | null;
  if (!res.ok) markSignedOut(typeof body?.error === 'string' ? body.error : `The relay refused the link (${res.status}).`);
}

/** Ends this browser's console session, then shows the sign-in page. */
export async function signOut(): Promise<void> {
  try {
    await fetch(`${BASE}/api/session/end`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: '{}',
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } finally {
    markSignedOut('You signed out.');
  }
}
