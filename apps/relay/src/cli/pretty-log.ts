import type { DestinationStream } from 'pino';
import type { Out } from './io';

const LEVELS: Record<number, { name: string; colour: string }> = {
  10: { name: 'TRACE', colour: '2' },
  20: { name: 'DEBUG', colour: '2' },
  30: { name: 'INFO ', colour: '32' },
  40: { name: 'WARN ', colour: '33' },
  50: { name: 'ERROR', colour: '31' },
  60: { name: 'FATAL', colour: '41;97' },
};
const SKIP = new Set(['level', 'time', 'msg', 'svc', 'pid', 'hostname']);

/**
 * A pino destination that prints each JSON line as `12:00:01.234 INFO  message key=value ...` for a
 * person at a terminal. pino has already applied redaction (secrets never reach this function), so
 * this is presentation only; anything that is not a pino line is passed through unchanged.
 */
export function prettyDestination(out: Out, colour: boolean): DestinationStream {
  const paint = (code: string, s: string) => (colour ? `\x1b[${code}m${s}\x1b[0m` : s);
  return {
    write(chunk: string): void {
      for (const raw of chunk.split('\n')) {
        if (raw.length > 0) out.write(formatLine(raw, paint) + '\n');
      }
    },
  };
}

export function formatLine(raw: string, paint: (code: string, s: string) => string = (_c, s) => s): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return raw;
  }
  if (typeof rec !== 'object' || rec === null || typeof rec.level !== 'number') return raw;
  const level = LEVELS[rec.level] ?? { name: String(rec.level).padEnd(5), colour: '0' };
  const time =
    typeof rec.time === 'string' ? rec.time.slice(11, 23) : typeof rec.time === 'number' ? new Date(rec.time).toISOString().slice(11, 23) : '';
  const fields = Object.entries(rec)
    .filter(([k, v]) => !SKIP.has(k) && v !== undefined)
    .map(([k, v]) => `${paint('2', k + '=')}${value(v)}`);
  return [paint('2', time), paint(level.colour, level.name), String(rec.msg ?? ''), ...fields].filter(Boolean).join(' ');
}

function value(v: unknown): string {
  if (typeof v === 'string') return /^[\w.:/@\-+[\]]+$/.test(v) ? v : JSON.stringify(v);
  return JSON.stringify(v);
}
