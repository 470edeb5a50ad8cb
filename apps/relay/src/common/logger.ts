import type { LoggerService } from '@nestjs/common';
import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './config/relay-config';
import { SECRET_FIELDS } from './auth/secret-fields';

const PINO_LEVEL: Record<LogLevel, string> = { DEBUG: 'debug', INFO: 'info', WARNING: 'warn', ERROR: 'error' };

/**
 * Field names whose values are secrets wherever they sit (top level or up to two objects down): the shared
 * list, as the relay spells its log fields (snake_case; pino matches paths exactly, and every spelling
 * more is three more paths checked on each line), and `key`, which in a log line is a credential.
 */
const SECRET_KEYS = [...SECRET_FIELDS, 'key'];
/**
 * A pairing code is also called `code` where it arrives (a request body, a frame payload, a QR's `relay`,
 * a `pairing` object): redacted there, by that path. The bare name `code` is an error code
 * (`auth.invalid_token`, `ENOENT`, `WS_ERR_UNSUPPORTED_MESSAGE_LENGTH`), which the log keeps readable.
 */
const PAIRING_CODE_PARENTS = ['body', 'payload', 'relay', 'pairing'];

/** Where secrets sit in what the relay logs: their values never reach a log line. */
export const REDACT_PATHS = [
  ...SECRET_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`]),
  ...PAIRING_CODE_PARENTS.flatMap((p) => [`${p}.code`, `*.${p}.code`, `*.*.${p}.code`]),
];

export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino(
    {
      level: PINO_LEVEL[level],
      base: { svc: 'relay' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      hooks: { logMethod: oneMessage },
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/**
 * A line has one `msg`: pino writes an object's own `msg` and then the message argument, so a call like
 * `warn({ msg: detail }, 'refused')` made a line with two `msg` keys (JSON parsers keep either one). The
 * object's `msg` is kept as `detail`.
 */
function oneMessage(this: Logger, args: Parameters<Logger['info']>, method: (...a: unknown[]) => void): void {
  const [first, ...rest] = args as unknown[];
  if (typeof first === 'object' && first !== null && !(first instanceof Error) && 'msg' in first && rest.length > 0) {
    const { msg, ...fields } = first as Record<string, unknown>;
    return method.apply(this, [{ ...fields, detail: msg }, ...rest]);
  }
  method.apply(this, args as unknown[]);
}

/** Nest's own messages (module init, route map) go through the same pino logger. */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}
  log(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }
}
