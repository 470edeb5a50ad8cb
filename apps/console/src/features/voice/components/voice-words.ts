/** How the Voice page names things (kinds, callers, sizes); pure, shared by its components. */

export const KIND_TITLE: Record<'output' | 'realtime' | 'realtime_agent', string> = {
  output: 'Voice output',
  realtime: 'Realtime voice',
  realtime_agent: 'Realtime agent',
};

/** `device:abcd1234` → `phone abcd1234`; `api` → `API key`. */
export function callerText(actor: string): string {
  if (actor.startsWith('device:')) return `phone ${actor.slice(7)}`;
  if (actor === 'api') return 'API key';
  return actor;
}

export function latencyText(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

export function secondsText(s: number): string {
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
  const whole = Math.round(s);
  return whole % 60 === 0 ? `${whole / 60} min` : `${Math.floor(whole / 60)} min ${whole % 60} s`;
}

export const words = (s: string) => s.replace(/_/g, ' ');

/** `1 session`, `2 sessions`. */
export const counted = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en')} ${n === 1 ? one : many}`;
