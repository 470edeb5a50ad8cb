import { defaultGrantGroups, OPT_IN_GRANTS, type GrantChannel } from '@svc/events/grant-channels';

/** Spec 8: the TTL picker's options. */
export const TTL_OPTIONS = [
  { label: '1 day', seconds: 86400 },
  { label: '7 days', seconds: 7 * 86400 },
  { label: '30 days', seconds: 30 * 86400 },
  { label: '90 days', seconds: 90 * 86400 },
  { label: '1 year', seconds: 365 * 86400 },
  { label: 'Never expire', seconds: 0 },
] as const;

/** Spec 8: 30 days on secure transports, 7 days on plain ws. */
export const defaultTtl = (tls: boolean): number => (tls ? 30 : 7) * 86400;

/** "chat and voice for the session; terminal and TUI 30 days; bridge 7 days; no desktop", from the relay's grant table. */
const DEFAULTS_HINT = [
  ...defaultGrantGroups().map(
    (g) => `${g.names.map((n) => (n === 'tui' ? 'TUI' : n)).join(' and ')} ${g.seconds === null ? 'for the session' : ttlLabel(g.seconds)}`,
  ),
  ...OPT_IN_GRANTS.map((c) => `no ${c}`),
].join('; ');

export const GRANT_PRESETS: Array<{ id: string; label: string; hint: string; grants?: Partial<Record<GrantChannel, number | false>> }> = [
  { id: 'all', label: 'Defaults', hint: DEFAULTS_HINT },
  {
    id: 'desktop',
    label: 'Desktop CLI (serves tools to the agent)',
    hint: 'the defaults and the desktop grant for 7 days: it may serve desktop tools, and call them from anywhere',
    grants: { desktop: 7 * 86400 },
  },
  {
    id: 'chat',
    label: 'Chat and voice only',
    hint: 'no terminal, TUI, bridge or desktop',
    grants: { terminal: false, tui: false, bridge: false, desktop: false },
  },
  { id: 'terminal', label: 'Chat, voice and terminal', hint: 'no device control (bridge) or desktop', grants: { bridge: false, desktop: false } },
  {
    id: 'day',
    label: 'Terminal for one day',
    hint: 'terminal and TUI for 24 h, no bridge or desktop',
    grants: { terminal: 86400, tui: 86400, bridge: false, desktop: false },
  },
];

export function ttlLabel(seconds: number | null | undefined): string {
  if (seconds === 0 || seconds === null) return 'never expires';
  const hit = TTL_OPTIONS.find((o) => o.seconds === seconds);
  return hit ? hit.label : `${Math.round((seconds ?? 0) / 86400)} days`;
}
