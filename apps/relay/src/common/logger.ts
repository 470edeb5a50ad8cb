import type { LoggerService } from '@nestjs/common';
import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './config';

const PINO_LEVEL: Record<LogLevel, string> = { DEBUG: 'debug', INFO: 'info', WARNING: 'warn', ERROR: 'error' };

/** Keys whose values never reach a log line, wherever they appear. */
export const REDACT_PATHS = [
  'token',
  'session_token',
  'pairing_code',
  'code',
  'key',
  'api_key',
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  '*.token',
  '*.session_token',
  '*.pairing_code',
  '*.code',
  '*.key',
  '*.api_key',
  '*.authorization',
];

export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino(
    {
      level: PINO_LEVEL[level],
      base: { svc: 'relay' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
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
