import type { JsonSchema } from '../common/http/dto-json-schema';
import { MAX_COORD } from './device-control-validators';

/**
 * The JSON Schema of each Device Control rule the relay writes itself (`ValidateBy` / `Check` by name, in
 * device-control-*.dto.ts and device-control-validators.ts): the generator knows the stock decorators,
 * not these. Each says what its predicate accepts; the predicate stays the check (a schema is a hint).
 */
export const DEVICE_CONTROL_RULE_SCHEMAS: Readonly<Record<string, JsonSchema>> = {
  isNodeId: {
    oneOf: [
      { type: 'string', minLength: 1, maxLength: 128 },
      { type: 'integer', minimum: 0 },
    ],
  },
  isDistance: {
    oneOf: [
      { type: 'number', minimum: 0, maximum: MAX_COORD },
      { type: 'string', enum: ['short', 'medium', 'long'] },
    ],
  },
  isMediaRef: { type: 'string', description: 'a relay media token, or MEDIA:svc-relay://<token>' },
  smallObject: { type: 'object' },
  selector: { type: 'string', minLength: 1, maxLength: 128 },
  // Cross-field rules: what they refuse is said in the tool's description.
  bodyOrAttachment: {},
  notBoth: {},
};
