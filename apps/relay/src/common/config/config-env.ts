/**
 * How every setting is read from the environment (and from a profile's `.env`): one rule for flags, one
 * for numbers, one error. Flags take 1, true, yes, on / 0, false, no, off (any case); numbers take what
 * `Number` reads, within their bounds. Unset or blank is the default.
 */

export class ConfigError extends Error {}

const ON = new Set(['1', 'true', 'yes', 'on']);
const OFF = new Set(['0', 'false', 'no', 'off']);

/** A flag's value (a string as above, a YAML boolean or 0/1); null when blank or not a flag. */
export function flagValue(v: unknown): boolean | null {
  if (typeof v === 'boolean') return v;
  const t = typeof v === 'string' ? v.trim().toLowerCase() : typeof v === 'number' ? String(v) : '';
  return ON.has(t) ? true : OFF.has(t) ? false : null;
}

export function envFlag(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const v = flagValue(raw);
  if (v === null) throw new ConfigError(`${name} must be 1, true, yes or on (0, false, no or off), got "${raw}"`);
  return v;
}

/**
 * A number setting: within `min`-`max` (above `min`, not at it, with `above`), a whole number with
 * `integer`; `label` names it in the error when more than the variable sets it (`RELAY_PORT/--port`).
 */
export type NumberRule = { default: number; min: number; max: number; integer?: boolean; above?: boolean; label?: string };

/** A number (or a numeric string) that keeps `rule`; null when blank or not. */
export function numberValue(v: unknown, rule: Omit<NumberRule, 'default' | 'label'>): number | null {
  if (typeof v === 'string' && v.trim() === '') return null;
  const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : NaN;
  if (!Number.isFinite(n) || (rule.integer && !Number.isInteger(n))) return null;
  if ((rule.above ? n <= rule.min : n < rule.min) || n > rule.max) return null;
  return n;
}

export function envNumber(env: NodeJS.ProcessEnv, name: string, rule: NumberRule): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return rule.default;
  const n = numberValue(raw, rule);
  if (n === null) throw new ConfigError(`${rule.label ?? name} must be ${numberRange(rule)}, got "${raw}"`);
  return n;
}

export function numberRange(rule: Pick<NumberRule, 'min' | 'max' | 'integer' | 'above'>): string {
  return `${rule.above ? `above ${rule.min} and at most ${rule.max}` : `${rule.min}-${rule.max}`}${rule.integer ? ' (a whole number)' : ''}`;
}

/** A port a server listens on (0: any free one). */
export const PORT = { min: 0, max: 65535, integer: true } as const;

/** The trimmed value, or null when unset or blank. */
export function envText(env: NodeJS.ProcessEnv, name: string): string | null {
  return env[name]?.trim() || null;
}

/** A comma-separated list, each item trimmed, blanks dropped. */
export function envList(env: NodeJS.ProcessEnv, name: string): string[] {
  return (env[name] ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}
