/**
 * How a request parameter is described in the OpenAPI document. `Rule`s (validation.ts) build
 * theirs as they are declared; parameters read without a rule (paging, `strIds`, an upload's
 * fields) declare theirs next to the code that reads them.
 */

/** A JSON Schema (draft 2020-12, which OpenAPI 3.1 uses), as a plain object. */
export type JsonSchema = Record<string, unknown>;

/** `either`: a body field on POST, else the query string (`utr`). */
export type ParamLocation = 'body' | 'query' | 'either';

export interface ParamDoc {
  name: string;
  in: ParamLocation;
  required: boolean;
  schema: JsonSchema;
  description?: string;
}

export function param(name: string, location: ParamLocation, schema: JsonSchema, description?: string, required = false): ParamDoc {
  return { name, in: location, required, schema, ...(description ? { description } : {}) };
}
