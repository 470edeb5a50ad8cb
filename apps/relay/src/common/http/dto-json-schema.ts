import type { ISchemaConverters } from 'class-validator-jsonschema/build/defaultConverters';
import { getMetadataStorage } from './validators';

/** A JSON Schema object (draft 2020-12, as MCP tool inputs take it). */
export type JsonSchema = { [key: string]: unknown };

type Ctor = abstract new (...args: never[]) => unknown;

/**
 * JSON Schemas of the relay's DTOs, generated from the class-validator rules the relay validates with
 * (class-validator-jsonschema), so a schema never says other than the check does. Rules of the relay's own
 * (`ValidateBy` / `Check` by name) have no stock translation: `custom` gives each one's schema by its name;
 * a named rule missing from it becomes `{}` (anything), never a reference to nowhere.
 *
 * Loaded by the first call (class-validator-jsonschema reads class-validator's whole index, which the
 * relay's start-up avoids: common/http/validators.ts).
 */
export class DtoJsonSchemas {
  private all: Record<string, JsonSchema> | null = null;

  constructor(private readonly custom: Readonly<Record<string, JsonSchema>>) {}

  /** The input schema of `dto`, self-contained: nested DTOs under `$defs`, no `$ref` outside it. */
  of(dto: Ctor): JsonSchema {
    const all = this.generated();
    const own = schemaOf(all, dto);
    const defs: Record<string, JsonSchema> = {};
    const visit = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(visit);
      if (typeof node !== 'object' || node === null) return;
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string' && v.startsWith(DEFS)) {
          const name = v.slice(DEFS.length);
          if (!defs[name] && all[name]) visit((defs[name] = all[name]));
        } else visit(v);
      }
    };
    visit(own);
    return { ...own, type: 'object', ...(Object.keys(defs).length > 0 ? { $defs: defs } : {}) };
  }

  private generated(): Record<string, JsonSchema> {
    if (this.all) return this.all;
    /* eslint-disable @typescript-eslint/no-require-imports */
    const { validationMetadatasToSchemas } = require('class-validator-jsonschema') as typeof import('class-validator-jsonschema');
    const { defaultMetadataStorage } = require('class-transformer/cjs/storage') as typeof import('class-transformer/types/storage');
    /* eslint-enable @typescript-eslint/no-require-imports */
    const converters: ISchemaConverters = {};
    for (const [name, schema] of Object.entries(this.custom)) converters[name] = schema;
    const all = validationMetadatasToSchemas({
      classValidatorMetadataStorage: getMetadataStorage(),
      classTransformerMetadataStorage: defaultMetadataStorage,
      refPointerPrefix: DEFS,
      additionalConverters: converters,
    }) as Record<string, JsonSchema>;
    this.all = Object.fromEntries(Object.entries(all).map(([k, v]) => [k, withoutDanglingRefs(v, all)]));
    return this.all;
  }
}

const DEFS = '#/$defs/';

/** A class with no rules of its own (`class SelectorQuery extends SelectorBody {}`) is its nearest ancestor's schema. */
function schemaOf(all: Record<string, JsonSchema>, dto: Ctor): JsonSchema {
  for (let c: unknown = dto; typeof c === 'function' && c !== Function.prototype; c = Object.getPrototypeOf(c)) {
    const s = all[(c as { name: string }).name];
    if (s) return s;
  }
  return { type: 'object', properties: {} };
}

/** A `$ref` to a class with no rules (`Object`, `Array`: what reflection gives a union-typed field) says nothing: `{}`. */
function withoutDanglingRefs(node: JsonSchema, all: Record<string, JsonSchema>): JsonSchema {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v !== 'object' || v === null) return v;
    const o = v as JsonSchema;
    if (typeof o.$ref === 'string' && o.$ref.startsWith(DEFS) && !all[o.$ref.slice(DEFS.length)]) {
      const { $ref: _, ...rest } = o;
      return walk(rest);
    }
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, walk(x)]));
  };
  return walk(node) as JsonSchema;
}
