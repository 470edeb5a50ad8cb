import { ArgumentsHost, BadRequestException, Catch, ExceptionFilter, Inject } from '@nestjs/common';
import { DomainError } from '@svc/domain';
import type { Logger } from 'pino';
import { ErrorFilter, toErrorResponse } from '../common/http/http-errors';
import { LOGGER } from '../common/auth/tokens';

/**
 * The voice routes' refusals carry `success: false` beside `ok: false` (the reference relay's clients read
 * `success`). A body or query their DTO refused (the relay-wide pipe's 400) is given it here, then answered
 * by the one error filter like any DomainError; anything else passes through unchanged.
 */
@Catch(BadRequestException)
export class VoiceRefusalFilter implements ExceptionFilter {
  private readonly errors: ErrorFilter;

  constructor(@Inject(LOGGER) logger: Logger) {
    this.errors = new ErrorFilter(logger);
  }

  catch(exception: BadRequestException, host: ArgumentsHost): void {
    const res = exception.getResponse();
    const fromPipe = typeof res === 'object' && res !== null && Array.isArray((res as { message?: unknown }).message);
    if (!fromPipe) return this.errors.catch(exception, host);
    const { body } = toErrorResponse(exception);
    this.errors.catch(new DomainError(body.code, 'invalid', body.error, { success: false }), host);
  }
}
