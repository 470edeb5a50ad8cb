import { DomainError } from '@svc/domain';
import { getMetadataStorage, ValidateBy, type ValidationError, type ValidationOptions } from './validators';

/*
 * Refusals that name their own code. Every DTO failure is a 400; by default its code is
 * `validation_failed`. A route or frame whose documented code is more specific (`clipboard.bad_format`,
 * `phone.bad_reply`...) says so on the rule itself, with class-validator's `context`:
 * `@Matches(RE, coded('phone.bad_chat_id', 'chat_id: ...'))`. The relay's pipe (validation.ts) and
 * parseFrame (parse-frame.ts) answer the code of the first failing rule that names one, with the messages
 * of every failing rule joined as for `validation_failed`. Two class decorators cover what no property
 * rule can see: a body that is not an object at all, and keys the DTO does not declare.
 */

/** What a rule's `context` carries: the code its failure answers, and fields the error body adds. */
export type CodedContext = { code: string; extra?: Record<string, unknown> };

/** A rule's options naming its code: `@IsString(coded('x.bad_y', 'y must be a string'))`. */
export function coded(code: string, message: string, extra?: Record<string, unknown>): ValidationOptions {
  const context: CodedContext = extra ? { code, extra } : { code };
  return { message, context };
}

/**
 * A rule written as a predicate over the raw value, for checks no stock decorator words the way the wire
 * does. `name` must be unique on its property (it keys the failure). Rules of one property run in an order
 * of class-validator's choosing; write each predicate to fail alone (pass the values another rule refuses).
 */
export function Check(name: string, test: (value: unknown) => boolean, options: ValidationOptions): PropertyDecorator {
  return ValidateBy({ name, validator: { validate: (value: unknown) => test(value) } }, options);
}

/**
 * A rule the domain already states as a function that throws a DomainError (`sessionNameOf`,
 * `termDimension`): the field fails, under `code` (with `extra` in the error body), with the message that
 * function gives for its value.
 */
export function DomainRule(name: string, code: string, check: (value: unknown) => unknown, extra?: Record<string, unknown>): PropertyDecorator {
  const problem = (value: unknown): string | null => {
    try {
      check(value);
      return null;
    } catch (err) {
      if (err instanceof DomainError) return err.message;
      throw err;
    }
  };
  const context: CodedContext = extra ? { code, extra } : { code };
  return ValidateBy(
    {
      name,
      validator: { validate: (value: unknown) => problem(value) === null, defaultMessage: (args) => problem(args?.value) ?? `${name} is invalid` },
    },
    { context },
  );
}

/** The code (and extra fields) of the first failing rule that names one, depth first in the order found; null: none does. */
export function refusalOf(errors: readonly ValidationError[]): CodedContext | null {
  for (const e of errors) {
    for (const constraint of Object.keys(e.constraints ?? {})) {
      const context = e.contexts?.[constraint] as Partial<CodedContext> | undefined;
      if (typeof context?.code === 'string') return { code: context.code, extra: context.extra };
    }
    const nested = e.children?.length ? refusalOf(e.children) : null;
    if (nested) return nested;
  }
  return null;
}

/** The error a coded refusal is: 400 (`invalid`), its code, the messages joined (each once). */
export function codedError(refusal: CodedContext, messages: readonly string[]): DomainError {
  return new DomainError(refusal.code, 'invalid', [...new Set(messages)].join('; '), refusal.extra ?? {});
}

type ClassRules = {
  notObject?: { code: string; message: string; noneIsEmpty: boolean };
  unknownKey?: { code: string; message: (key: string) => string };
};

const CLASS_RULES = new Map<unknown, ClassRules>();
/** Each DTO class's rules with its parents', resolved once (the pipe asks on every request). */
const resolved = new Map<unknown, ClassRules>();

function rulesOf(type: unknown): ClassRules {
  const known = resolved.get(type);
  if (known) return known;
  const out: ClassRules = {};
  // A subclass keeps its parents' rules unless it names its own.
  for (let t = type; typeof t === 'function' && t !== Function.prototype; t = Object.getPrototypeOf(t) as unknown) {
    const own = CLASS_RULES.get(t);
    out.notObject ??= own?.notObject;
    out.unknownKey ??= own?.unknownKey;
  }
  resolved.set(type, out);
  return out;
}

function addRule(rule: ClassRules): ClassDecorator {
  return (target) => {
    CLASS_RULES.set(target, { ...CLASS_RULES.get(target), ...rule });
    resolved.clear();
  };
}

/**
 * A body or frame that is not a JSON object (null, an array, a string) is refused with this code, before any
 * rule runs. `noneIsEmpty`: no body at all (or `null`) is read as `{}` instead, as the pipe does without this.
 */
export function RefuseNonObject(code: string, message: string, options: { noneIsEmpty?: boolean } = {}): ClassDecorator {
  return addRule({ notObject: { code, message, noneIsEmpty: options.noneIsEmpty ?? false } });
}

/**
 * A key the DTO does not declare is refused by name (the pipe would otherwise drop it), once every
 * declared field has passed: for a destructive route where a misspelt filter must not widen what it does.
 */
export function RefuseUnknownKeys(code: string, message: (key: string) => string): ClassDecorator {
  return addRule({ unknownKey: { code, message } });
}

/** The DTO's refusal of a value that is not an object, if it names one. */
export function nonObjectRefusal(type: unknown, value: unknown): DomainError | null {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return null;
  const rule = rulesOf(type).notObject;
  if (!rule || (rule.noneIsEmpty && (value === null || value === undefined))) return null;
  return new DomainError(rule.code, 'invalid', rule.message);
}

const declared = new Map<unknown, ReadonlySet<string>>();

/** The DTO's refusal of the first key `raw` holds that the DTO does not declare, if it refuses those. */
export function unknownKeyRefusal(type: unknown, raw: unknown): DomainError | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const rule = rulesOf(type).unknownKey;
  if (!rule) return null;
  let keys = declared.get(type);
  if (!keys) {
    keys = new Set(
      getMetadataStorage()
        .getTargetValidationMetadatas(type as new () => object, '', true, false)
        .map((m) => m.propertyName),
    );
    declared.set(type, keys);
  }
  const unknown = Object.keys(raw).find((k) => !keys.has(k));
  return unknown === undefined ? null : new DomainError(rule.code, 'invalid', rule.message(unknown));
}
