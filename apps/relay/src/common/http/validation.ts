import { HttpException, ValidationPipe, type ArgumentMetadata, type ValidationPipeOptions } from '@nestjs/common';
import { codedError, nonObjectRefusal, refusalOf, unknownKeyRefusal } from './dto-refusals';
import { validatorPackage, type ValidationError } from './validators';

/**
 * The relay's options: unknown properties refused, values transformed into their DTO classes, and
 * class-validator reached through ./validators (not its whole index; see there).
 */
export const RELAY_VALIDATION: ValidationPipeOptions = {
  whitelist: true,
  transform: true,
  forbidUnknownValues: true,
  stopAtFirstError: false,
  validatorPackage,
};

/**
 * Nest's ValidationPipe with one shortcut on the hot path: a query or body that is an empty plain object
 * (`GET /ping` and most Device Control reads) gives the same result every time for a given DTO, so the
 * first one is validated in full and, when it passes, each later one gets a copy of that transformed
 * instance. The relay's DTOs depend on nothing but their input (no clock, no I/O), which is what makes
 * the outcome cacheable. A DTO that refuses an empty value is validated in full every time, as is every
 * non-empty value.
 *
 * A refusal is 400 `validation_failed` with the constraint messages joined, unless a failing rule names its
 * own code (dto-refusals.ts: `coded(...)`, `@RefuseNonObject`, `@RefuseUnknownKeys`): then it is that code,
 * still 400 `{ok: false, error, code}`.
 */
export class RelayValidationPipe extends ValidationPipe {
  /** DTO class -> its instance for `{}`, or null when `{}` does not pass. */
  private readonly empty = new Map<unknown, object | null>();

  constructor(options: ValidationPipeOptions = RELAY_VALIDATION) {
    super(options);
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const type = metadata.metatype;
    if (!type || !this.toValidate(metadata)) return super.transform(value, metadata);
    const notObject = nonObjectRefusal(type, value);
    if (notObject) throw notObject;
    const instance = await this.validated(value, metadata);
    // Once the declared fields pass; the value's keys are read after Nest dropped `__proto__` and `constructor`.
    const unknownKey = unknownKeyRefusal(type, value);
    if (unknownKey) throw unknownKey;
    return instance;
  }

  /** A refusal whose first coded rule names a code answers it; any other is Nest's BadRequestException (`validation_failed`). */
  override createExceptionFactory(): (errors?: ValidationError[]) => unknown {
    const plain = super.createExceptionFactory();
    return (errors: ValidationError[] = []) => {
      const exception = plain(errors);
      const refusal = refusalOf(errors);
      if (!refusal || !(exception instanceof HttpException)) return exception;
      const res = exception.getResponse();
      const messages = typeof res === 'object' && res !== null ? (res as { message?: unknown }).message : res;
      return codedError(refusal, Array.isArray(messages) ? messages.map(String) : [String(messages)]);
    };
  }

  private async validated(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const type = metadata.metatype;
    if (!isEmptyPlainObject(value)) return super.transform(value, metadata);
    const known = this.empty.get(type);
    if (known === null) return super.transform(value, metadata);
    if (known) return copyOf(known);
    try {
      const instance = (await super.transform(value, metadata)) as object;
      // Copies are shallow: an empty instance holding an object or array (a default) is never cached.
      this.empty.set(type, Object.values(instance).some((v) => typeof v === 'object' && v !== null) ? null : copyOf(instance));
      return instance;
    } catch (err) {
      this.empty.set(type, null);
      throw err;
    }
  }
}

function isEmptyPlainObject(v: unknown): v is Record<string, never> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  for (const k in v) if (Object.prototype.hasOwnProperty.call(v, k)) return false;
  return true;
}

/** A shallow copy with the same prototype (the DTO class), so no caller can change the cached instance. */
function copyOf(instance: object): object {
  return Object.assign(Object.create(Object.getPrototypeOf(instance) as object | null) as object, instance);
}
