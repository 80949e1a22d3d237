import Ajv2020, { ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Response } from 'supertest';

type Doc = { paths: Record<string, Record<string, { responses: Record<string, { $ref?: string; content?: Record<string, unknown> }> }>>; components: { responses: Record<string, { content?: Record<string, unknown> }> } };

const PREFIX = '/api/v1';
const pointerPart = (text: string) => text.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Checks answers of the API against its own OpenAPI document (GET /api/v1/openapi.json): the
 * harness runs it on every response of `h.api(...)`, so every API test of the suite also checks
 * that what it got is what the document says (status, media type, and the JSON body against
 * the schema: every required member, every type, no undocumented member in a record).
 */
export class OpenApiCheck {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly doc: Doc) {
    addFormats(this.ajv);
    this.ajv.addSchema(doc as object, 'openapi.json');
  }

  /** Throws, naming the request and each mismatch, when the answer is not what the document describes. */
  readonly check = (res: Response): void => {
    const req = (res as unknown as { req: { method: string; path: string } }).req;
    const url = new URL(req.path, 'http://x');
    if (!url.pathname.startsWith(PREFIX)) return;
    const path = url.pathname.slice(PREFIX.length).replace(/(.)\/+$/, '$1') || '/';
    const method = req.method === 'HEAD' ? 'get' : req.method.toLowerCase();
    const what = `${req.method} ${url.pathname}${url.search} answered ${res.status}`;
    if (res.status === 204 || res.status === 304 || req.method === 'HEAD') return;
    const operation = this.doc.paths[path]?.[method];
    // Unknown paths (404) and wrong methods (405) belong to no operation: they are failures.
    const location = operation ? this.responseLocation(path, method, res.status) : '#/components/responses/Failure';
    const response = this.resolve(location) as { content?: Record<string, unknown> };
    const type = res.type;
    if (!response.content?.[type]) {
      throw new Error(`${what} ${type}, which the OpenAPI document does not describe (it says ${Object.keys(response.content ?? {}).join(', ') || 'no content'}).`);
    }
    if (type !== 'application/json') return;
    const pointer = `${location}/content/${pointerPart(type)}/schema`;
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `openapi.json${pointer}` });
      this.compiled.set(pointer, validate);
    }
    if (!validate(res.body)) {
      const errors = (validate.errors ?? []).slice(0, 8).map((e) => `${e.instancePath || '(body)'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
      throw new Error(`${what}, which does not match the OpenAPI document (${pointer}):\n  ${errors.join('\n  ')}\nbody: ${JSON.stringify(res.body).slice(0, 600)}`);
    }
  };

  /** The pointer of the response object the status picks (its own, or `default`), past a $ref. */
  private responseLocation(path: string, method: string, status: number): string {
    const responses = this.doc.paths[path][method].responses;
    const key = String(status) in responses ? String(status) : 'default';
    const own = responses[key];
    if (!own) throw new Error(`${method.toUpperCase()} ${path} answered ${status}, and the OpenAPI document has neither ${status} nor a default for it.`);
    return own.$ref ?? `#/paths/${pointerPart(path)}/${method}/responses/${key}`;
  }

  private resolve(pointer: string): unknown {
    return pointer
      .slice(2)
      .split('/')
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], this.doc);
  }
}
