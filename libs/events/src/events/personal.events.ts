import type { Ev } from '../event';

/**
 * Crypto-shredding of personal content (notification text, Thread messages and replies): that content
 * is sealed in the records under per-device, per-hour data keys kept outside the log. Forgetting destroys
 * keys; this event says which, why and by whom (never the content), so replay scrubs the same entries.
 * Scope `secret`: one named secret's value keys (`secret-<name>:...`), forgotten or replaced (secret.events.ts).
 */
export type ForgetScope = 'device' | 'before' | 'retention' | 'revoked' | 'secret';

export type PersonalDataForgotten = Ev<
  'personal.forgotten',
  {
    scope: ForgetScope;
    /** The device prefix asked for (`device`, `revoked`), the secret's key owner (`secret-<name>`), or null. */
    device: string | null;
    /** The time asked for (`before`, `retention`: ISO), or null. Keys are per hour: every hour that began before it goes. */
    before: string | null;
    /** The data keys destroyed (`<device>:<YYYY-MM-DDTHH>:<random>`). */
    keys: string[];
  }
>;

export type PersonalDataEvent = PersonalDataForgotten;
