/**
 * The Events page's family filters: each a comma list of type families, read by the relay's one rule
 * (libs/events event-types-match.ts). Together they cover every family of the relay's event union; a
 * test (test/console/event-summary.spec.ts) fails when an event type falls under none.
 */
export const FAMILIES: ReadonlyArray<{ label: string; value: string }> = [
  { label: 'All', value: '' },
  { label: 'Sessions & renewal', value: 'session.,trust.' },
  { label: 'Pairing', value: 'pairing.' },
  { label: 'Phones & Threads', value: 'phone.' },
  { label: 'Terminal', value: 'terminal.,tui.' },
  { label: 'Bridge', value: 'bridge.' },
  { label: 'Media', value: 'media.' },
  { label: 'Voice', value: 'voice.' },
  { label: 'Profiles', value: 'profile.' },
  { label: 'Desktop', value: 'desktop.' },
  { label: 'Notifications', value: 'notification.,clipboard.,chat.' },
  { label: 'Personal data & secrets', value: 'personal.,secret.' },
  { label: 'Secure Link & Reach', value: 'secure_link.' },
  { label: 'Auth & blocks', value: 'auth.,ratelimit.,console.' },
  { label: 'Relay', value: 'relay.' },
  { label: 'Store', value: 'store.,log.' },
];
