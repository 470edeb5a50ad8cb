import { DomainError } from '@svc/domain';
import { plainToInstance } from 'class-transformer';
import { codedError, nonObjectRefusal, refusalOf, unknownKeyRefusal } from '../http/dto-refusals';
import { RELAY_VALIDATION } from '../http/validation';
import { validateSync, type ValidationError, type ValidatorOptions } from '../http/validators';

/** A refusal names at most this many problems (a nested frame can have many). */
const MAX_MESSAGES = 10;

/** The HTTP pipe's validator options (RELAY_VALIDATION), without the pipe's own. */
const FRAME_VALIDATION: ValidatorOptions = {
  whitelist: RELAY_VALIDATION.whitelist,
  forbidUnknownValues: RELAY_VALIDATION.forbidUnknownValues,
  stopAtFirstError: RELAY_VALIDATION.stopAtFirstError,
  validationError: { target: false, value: false },
};

export type ParsedFrame<T> = { ok: true; value: T } | { ok: false; error: DomainError };

/**
 * A socket frame's payload read into `Dto` the way the relay's HTTP pipe reads a body (RelayValidationPipe):
 * class-transformer builds the instance (its @Transform and @Type apply; `__proto__` and `constructor` keys
 * are never copied), class-validator checks it with the relay's options (undeclared properties dropped).
 * Synchronous, so a socket's frames are handled in the order they came. A refusal is a DomainError
 * `validation_failed` whose message joins the constraint messages (each once) as the HTTP 400 does, so a
 * gateway can send it as an error frame; nothing is thrown. The DTO's own codes apply as they do over HTTP
 * (dto-refusals.ts): a failing rule's `coded(...)`, `@RefuseNonObject`, `@RefuseUnknownKeys`.
 *
 * Each parse costs some µs (about 4-7 for a frame of two fields, more as it grows; class-transformer copies
 * nested objects whole): a hot or large frame (terminal.input, bridge.response) is read by hand instead.
 */
export function parseFrame<T extends object>(dto: new () => T, payload: unknown): ParsedFrame<T> {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
    return { ok: false, error: nonObjectRefusal(dto, payload) ?? refused(null, ['the frame must be a JSON object']) };
  const value = plainToInstance(dto, payload as Record<string, unknown>);
  const errors = validateSync(value, FRAME_VALIDATION);
  if (errors.length > 0) return { ok: false, error: refused(refusalOf(errors), messagesOf(errors)) };
  const unknownKey = unknownKeyRefusal(dto, payload);
  return unknownKey ? { ok: false, error: unknownKey } : { ok: true, value };
}

function refused(refusal: ReturnType<typeof refusalOf>, messages: string[]): DomainError {
  const unique = [...new Set(messages)];
  const shown = unique.slice(0, MAX_MESSAGES);
  if (unique.length > MAX_MESSAGES) shown.push('…');
  return refusal ? codedError(refusal, shown) : new DomainError('validation_failed', 'invalid', shown.join('; '));
}

/** Every constraint message, a nested one prefixed with its path (`attachments.0.media ...`), as Nest's pipe words them. */
function messagesOf(errors: ValidationError[], path = ''): string[] {
  const out: string[] = [];
  for (const e of errors) {
    for (const m of Object.values(e.constraints ?? {})) out.push(path ? `${path}.${m}` : m);
    if (e.children?.length) out.push(...messagesOf(e.children, path ? `${path}.${e.property}` : e.property));
  }
  return out;
}

/** parseFrame for a channel handler whose errors are thrown DomainErrors: the value, or the refusal thrown. */
export function readFrame<T extends object>(dto: new () => T, payload: unknown): T {
  const r = parseFrame(dto, payload);
  if (!r.ok) throw r.error;
  return r.value;
}
