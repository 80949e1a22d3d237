import type { JsonSchema } from '../http/param-doc';
import { LIMITS } from '../lib/constants';
import { RecordName } from './records';

/**
 * The pieces a route's description is made of: the success answer (`says`, `holds`, `lists`,
 * …) and the schema words the records are written in. Each route declares its success in one
 * line next to its registration; records and the envelope are shared components (records.ts).
 */

/** An OpenAPI response object for the 200 answer. */
export interface SuccessDoc {
  description: string;
  content: Record<string, { schema: JsonSchema }>;
}

export const ref = (name: RecordName | 'Pagination' | 'FieldErrors'): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

/** `{ status: 'success', message, …extra }` with nothing else. */
export function successEnvelope(message: JsonSchema, extra: Record<string, JsonSchema> = {}): JsonSchema {
  return {
    type: 'object',
    properties: { status: { const: 'success' }, message, ...extra },
    required: ['status', 'message', ...Object.keys(extra)],
    additionalProperties: false,
  };
}

const json = (description: string, schema: JsonSchema): SuccessDoc => ({ description, content: { 'application/json': { schema } } });

/** `message` is this constant string. */
export function says(text: string): SuccessDoc {
  return json(`\`message\`: '${text}'.`, successEnvelope({ const: text }));
}

/** `message` is the constant string and other members sit beside it (an import's `summary`). */
export function saysWith(text: string, extra: Record<string, JsonSchema>): SuccessDoc {
  return json(`\`message\`: '${text}', with ${Object.keys(extra).map((k) => `\`${k}\``).join(', ')}.`, successEnvelope({ const: text }, extra));
}

/** The reference's odd success of three deletes: the constant string under `errors`. */
export function saysUnderErrors(text: string): SuccessDoc {
  return json(`\`errors\`: '${text}' while \`status\` is 'success' (as the reference shows it).`, {
    type: 'object',
    properties: { status: { const: 'success' }, errors: { const: text } },
    required: ['status', 'errors'],
    additionalProperties: false,
  });
}

/** `message` is an object of exactly these members. */
export function holds(members: Record<string, JsonSchema>, description?: string): SuccessDoc {
  const names = Object.keys(members).map((k) => `\`message.${k}\``).join(', ');
  return json(description ?? names, successEnvelope(object(members)));
}

/** `message[collection]` lists records; `message.pagination` comes with `page` / `per_page`. */
export function lists(collection: string, item: JsonSchema): SuccessDoc {
  return json(`\`message.${collection}\`: every live record, newest first; with \`page\` or \`per_page\`, one page and \`message.pagination\`.`, successEnvelope({
    type: 'object',
    properties: { [collection]: { type: 'array', items: item }, pagination: ref('Pagination') },
    required: [collection],
    additionalProperties: false,
  }));
}

/** A CSV download. */
export function csvFile(description: string): SuccessDoc {
  return { description, content: { 'text/csv': { schema: { type: 'string' } } } };
}

// Schema words.
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
