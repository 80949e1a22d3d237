import type { JsonSchema, ParamDoc } from '../http/param-doc';
import { TEAM_ROLES } from '../lib/constants';
import { API_PREFIX } from '../lib/paths';
import { ref, SuccessDoc } from './describe';
import { pagination } from './schema-words';
import { EncodedJson, encodeJson, sendEncodedJson } from './encoded-json';
import { RECORDS } from './records';
import type { ApiRoutes, DescribedRoute } from './routes';

/**
 * GET /openapi.json: an OpenAPI 3.1 document of every route of the table, generated from the
 * table itself: each route's RouteDoc (summary, success answer) and the rules of its
 * `validate(...)` handlers (parameters: where, required, type, format, limits, enums).
 */

const FIELD_ERRORS: JsonSchema = {
  type: 'object',
  description: 'Parameter (or header) name → its messages.',
  additionalProperties: { type: 'array', items: { type: 'string' } },
};

const failure = (errors: JsonSchema): JsonSchema => ({
  type: 'object',
  properties: { status: { const: 'failed' }, errors },
  required: ['status', 'errors'],
  additionalProperties: false,
});

const jsonResponse = (description: string, schema: JsonSchema, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema } },
});

const COMPONENTS = {
  schemas: {
    FieldErrors: FIELD_ERRORS,
    Failure: failure({ oneOf: [{ type: 'string' }, ref('FieldErrors')] }),
    Pagination: pagination,
    ...RECORDS,
  },
  responses: {
    Unauthorized: jsonResponse(
      'A key header missing (`errors` names it: "The public key field is required.") or keys that are wrong ("Invalid API keys").',
      failure({ oneOf: [{ type: 'string' }, ref('FieldErrors')] }),
    ),
    Forbidden: jsonResponse(
      "The key's role may not call this operation (see its `x-roles`): \"You do not have permission to do this.\" Nothing was changed.",
      failure({ const: 'You do not have permission to do this.' }),
    ),
    ValidationFailed: jsonResponse('Missing or invalid input: every failing parameter with its messages.', failure(ref('FieldErrors'))),
    TooManyRequests: jsonResponse('More requests than API_RATE_LIMIT a minute for this key pair: "Too Many Requests".', failure({ const: 'Too Many Requests' }), {
      'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } },
    }),
    Failure: jsonResponse(
      'Any other failure: 404 "Record Not Found" (an id or utr that is not this account\'s), 409 a business rule refused (the sentence says what to do), 413 a body too large, 503 the mail server unavailable, 500 "Internal Server Error".',
      { $ref: '#/components/schemas/Failure' },
    ),
  },
  securitySchemes: {
    PublicKey: { type: 'apiKey', in: 'header', name: 'PublicKey', description: 'The public key of the account (dashboard, API keys).' },
    SecretKey: { type: 'apiKey', in: 'header', name: 'SecretKey', description: 'The secret key, shown once when made.' },
  },
};

const MEDIA_FORM = ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'];

/** getContactsTypeView for GET /contacts-type/view. */
function operationId(method: string, path: string): string {
  return method.toLowerCase() + path.replace(/[^A-Za-z0-9]+([A-Za-z0-9])/g, (_m, c: string) => c.toUpperCase()).replace(/[^A-Za-z0-9]/g, '');
}

/** The same name twice (a route's own rule and a shared one) is one parameter, required if either is. */
function merged(params: readonly ParamDoc[]): ParamDoc[] {
  const byName = new Map<string, ParamDoc>();
  for (const p of params) {
    const seen = byName.get(p.name);
    if (!seen) byName.set(p.name, { ...p, schema: { ...p.schema } });
    else seen.required ||= p.required;
  }
  return [...byName.values()];
}

function schemaOf(p: ParamDoc): JsonSchema {
  return p.description ? { ...p.schema, description: p.description } : p.schema;
}

function operation(route: DescribedRoute) {
  const params = merged(route.params);
  const inBody = (p: ParamDoc) => route.method === 'POST' && p.in !== 'query';
  const query = params.filter((p) => !inBody(p));
  const body = params.filter(inBody);
  const roles = route.permission?.roles;
  const rolesLine = roles ? `Roles: ${roles.join(', ')}.` : '';
  const description = [route.doc.description, rolesLine].filter(Boolean).join('\n\n');
  const op: Record<string, unknown> = {
    operationId: operationId(route.method, route.path),
    summary: route.doc.summary,
    ...(description ? { description } : {}),
    // Which roles of API key may call it (src/http/permissions.ts; docs/team-and-roles.md).
    ...(roles ? { 'x-roles': [...roles] } : {}),
    ...(route.tag ? { tags: [route.tag] } : {}),
    ...(route.doc.public ? { security: [] } : {}),
  };
  if (query.length > 0) {
    op.parameters = query.map((p) => ({
      name: p.name,
      in: 'query',
      required: p.required,
      ...(p.description ? { description: p.description } : {}),
      schema: p.schema,
      // `custom_field[<name>]`-style objects travel as bracketed keys.
      ...(p.schema.type === 'object' ? { style: 'deepObject', explode: true } : {}),
    }));
  }
  if (body.length > 0) {
    const schema = {
      type: 'object',
      properties: Object.fromEntries(body.map((p) => [p.name, schemaOf(p)])),
      ...(body.some((p) => p.required) ? { required: body.filter((p) => p.required).map((p) => p.name) } : {}),
    };
    const media = route.upload ? ['multipart/form-data'] : MEDIA_FORM;
    op.requestBody = { required: body.some((p) => p.required), content: Object.fromEntries(media.map((type) => [type, { schema }])) };
  }
  op.responses = {
    '200': route.doc.response,
    ...(route.doc.public
      ? {}
      : {
          '401': { $ref: '#/components/responses/Unauthorized' },
          ...(roles && roles.length < TEAM_ROLES.length ? { '403': { $ref: '#/components/responses/Forbidden' } } : {}),
          '429': { $ref: '#/components/responses/TooManyRequests' },
        }),
    '422': { $ref: '#/components/responses/ValidationFailed' },
    ...route.doc.failures,
    default: { $ref: '#/components/responses/Failure' },
  };
  return op;
}

export function openApiDocument(routes: ApiRoutes): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes.routes()) {
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route);
  }
  const tags = [...new Set(routes.routes().map((r) => r.tag).filter((t): t is string => !!t))].map((name) => ({ name }));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Email Campaign Management API',
      version: '1',
      description: [
        'Every request carries the headers `PublicKey` and `SecretKey`. Answers are JSON envelopes:',
        "`{ status: 'success', message }` or `{ status: 'failed', errors }` (a string, or parameter → messages).",
        'POST parameters may be sent as JSON, urlencoded or multipart form fields; arrays as `name[0]`, `name[1]`, … or JSON arrays.',
        'Unknown paths answer 404 "Not Found", a wrong method 405 "Method Not Allowed" with `Allow`.',
        'Routes beyond the reference say "extension" in their summary.',
        "Each operation lists the roles of API key that may call it (`x-roles`, and a line of its description); the account's original key pair has the owner role. Any other role gets 403 \"You do not have permission to do this.\" and nothing changes.",
      ].join('\n'),
    },
    // Relative to where the document is served, so the docs page works on any origin.
    servers: [{ url: API_PREFIX }],
    security: [{ PublicKey: [], SecretKey: [] }],
    tags,
    paths,
    components: COMPONENTS,
  };
}

/** Registers GET /openapi.json (public); the document is built and compressed once, on first use. */
export function mountOpenApi(routes: ApiRoutes): void {
  let encoded: Promise<EncodedJson> | undefined;
  routes.get(
    '/openapi.json',
    { summary: 'This document (OpenAPI 3.1)', response: openApiResponse(), public: true },
    async (req, res) => {
      encoded ??= encodeJson(openApiDocument(routes));
      sendEncodedJson(req, res, await encoded, 300);
    },
  );
}

function openApiResponse(): SuccessDoc {
  return {
    description: 'The OpenAPI 3.1 document of this API (not in the envelope).',
    content: { 'application/json': { schema: { type: 'object', required: ['openapi', 'info', 'paths'], properties: { openapi: { const: '3.1.0' } } } } },
  };
}

