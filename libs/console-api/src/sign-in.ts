/** `POST /console/api/session`: the one-time link opened; the answer sets the console's HttpOnly cookie. */
export type SignInAnswer = { ok: true; expires_at: number };

/** `POST /console/api/session/links`: a fresh one-time sign-in link (what `svc relay console` prints). */
export type SignInLinkAnswer = { ok: true; url: string; expires_at: number };

/** `POST /console/api/session/end`: this browser signed out (false when it was signed in by key, not cookie). */
export type SignOutAnswer = { ok: true; signed_out: boolean };
