import type { JsonSchema } from '../http/param-doc';
import { LIMITS } from '../lib/constants';

/** The schema words the records and route descriptions are written in. */
export const int: JsonSchema = { type: 'integer' };
export const str: JsonSchema = { type: 'string' };
export const flag: JsonSchema = { type: 'integer', enum: [0, 1] };
export const strings: JsonSchema = { type: 'array', items: str };
export const uuid: JsonSchema = { type: 'string', format: 'uuid' };
/** `2026-11-22T09:15:03.123000Z`: UTC, six fractional digits. */
export const timestamp: JsonSchema = { type: 'string', format: 'date-time', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}Z$' };
/** `YYYY-MM-DD HH:MM:SS` (sent_at, live_at, send_at). */
export const plainDateTime: JsonSchema = { type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$' };

export function nullable(schema: JsonSchema): JsonSchema {
  if (typeof schema.type === 'string') {
    return { ...schema, type: [schema.type, 'null'], ...(Array.isArray(schema.enum) ? { enum: [...schema.enum, null] } : {}) };
  }
  return { anyOf: [schema, { type: 'null' }] };
}

export const arrayOf = (items: JsonSchema): JsonSchema => ({ type: 'array', items });

/** An object of exactly these members, all present. */
export function object(members: Record<string, JsonSchema>, optional: readonly string[] = []): JsonSchema {
  return {
    type: 'object',
    properties: members,
    required: Object.keys(members).filter((k) => !optional.includes(k)),
    additionalProperties: false,
  };
}

/** A schema for each member of T, no more, no fewer: the compiler keeps a record and its schema together. */
export type Members<T> = { [K in keyof Required<T>]: JsonSchema };

/** The paging extension's parameters are described in src/http/paging.ts; this is the answer's part. */
export const pagination: JsonSchema = object({
  page: { type: 'integer', minimum: 1 },
  per_page: { type: 'integer', minimum: 1, maximum: LIMITS.perPageMax },
  total: { type: 'integer', minimum: 0 },
});
