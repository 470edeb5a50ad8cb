import type { DoctorCheck } from './doctor-check';

/** What `/health` says of Secure Link and Reach (the fields the checks read). */
export type SecureLinkHealth = {
  enabled?: boolean;
  status?: string;
  url?: string;
  last_error?: string;
  identity_changed_at?: string;
  identity?: { pin_sha256?: string; not_after?: string };
  reach?: { enabled?: boolean; state?: string; last_error?: string | null };
};

/** Secure Link (on, off or broken; the identity's expiry and last change) and Reach, from `/health`. */
export function secureLinkChecks(sl: SecureLinkHealth): DoctorCheck[] {
  const out: DoctorCheck[] = [];
  if (!sl.enabled) out.push({ id: 'secure-link', status: 'ok', summary: 'Secure Link is off (phones reach the relay directly)' });
  else if (sl.status !== 'available')
    out.push({
      id: 'secure-link',
      status: 'error',
      summary: `Secure Link is enabled but not running: ${sl.last_error ?? 'unknown reason'}`,
      fix: 'see GET /secure-link/preflight on this machine; fix the cause and restart the relay',
    });
  else {
    const days = sl.identity?.not_after ? Math.floor((Date.parse(sl.identity.not_after) - Date.now()) / 86_400_000) : null;
    const changed = sl.identity_changed_at ? `; the identity changed at ${sl.identity_changed_at}: phones paired before then must pair again` : '';
    out.push({
      id: 'secure-link',
      status: (days !== null && days < 30) || changed ? 'warn' : 'ok',
      summary: `Secure Link at ${sl.url ?? '?'} (pin ${sl.identity?.pin_sha256 ?? '?'}, certificate valid ${days ?? '?'} more days)${changed}`,
      ...(days !== null && days < 30
        ? { fix: 'renew the Secure Link certificate (a new one means pairing every phone again)' }
        : changed
          ? { fix: 'pair the affected phones again (svc relay pair)' }
          : {}),
    });
  }
  const r = sl.reach;
  if (r?.enabled)
    out.push(
      r.state === 'connected'
        ? { id: 'reach', status: 'ok', summary: 'Reach is connected to its broker' }
        : {
            id: 'reach',
            status: r.state === 'unavailable' ? 'error' : 'warn',
            summary: `Reach is ${r.state ?? 'unknown'}${r.last_error ? `: ${r.last_error}` : ''}`,
            fix:
              r.state === 'unavailable'
                ? 'set what the reason names and restart the relay'
                : 'check that the broker runs and the host token matches its credentials entry',
          },
    );
  return out;
}
