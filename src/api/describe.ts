import type { JsonSchema } from '../http/param-doc';
import type { RecordName } from './records';
import { object } from './schema-words';

/**
 * The pieces a route's description is made of: the success answer (`says`, `holds`, `lists`,
 * …). Each route declares its success in one line next to its registration; records and the
 * envelope are shared components (records.ts), written in the words of schema-words.ts.
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

/** A failure whose sentence is under `message` (`{ status: 'failed', message }`): one of these constant sentences. */
export function failsWith(description: string, sentences: readonly string[]): SuccessDoc {
  return json(description, {
    type: 'object',
    properties: { status: { const: 'failed' }, message: { type: 'string', enum: [...sentences] } },
    required: ['status', 'message'],
    additionalProperties: false,
  });
}
