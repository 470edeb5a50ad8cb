import type { CommandShape } from '@svc/events';

/**
 * Fields that describe *how* a command acts, not *what the user said*: kept as values in events.
 * Everything else (texts, SMS bodies, numbers dialled, clipboard, contact queries, intent data and
 * extras, attachment paths) is reduced to its type and size class.
 */
const SAFE_FIELDS = new Set([
  'x',
  'y',
  'start_x',
  'start_y',
  'end_x',
  'end_y',
  'nodeId',
  'node_id',
  'duration',
  'duration_ms',
  'direction',
  'distance',
  'key',
  'timeoutMs',
  'package',
  'action',
  'enabled',
  'include_bounds',
  'limit',
  'since',
  'exact',
  'clearFirst',
  'clickable',
  'class_name',
  'className',
  'category',
  'component',
]);

/** Routes whose `action` / `package` could still be personal are not special: those fields name apps and intents, not content. */
export function commandShape(body: Readonly<Record<string, unknown>>, params: Readonly<Record<string, unknown>> = {}): CommandShape {
  const out: CommandShape = {};
  const add = (prefix: string, obj: Readonly<Record<string, unknown>>) => {
    for (const [k, v] of Object.entries(obj)) {
      if (v === undefined) continue;
      const key = prefix + k;
      out[key] = SAFE_FIELDS.has(k) && isScalar(v) ? clip(v) : typeOf(v);
    }
  };
  add('', body);
  add('?', params);
  return out;
}

function isScalar(v: unknown): v is string | number | boolean | null {
  return v === null || typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string';
}

function clip(v: string | number | boolean | null): string | number | boolean | null {
  return typeof v === 'string' && v.length > 128 ? 'string' : v;
}

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `array(${v.length})`;
  if (typeof v === 'string') return v.length === 0 ? 'string(empty)' : 'string';
  return typeof v;
}
