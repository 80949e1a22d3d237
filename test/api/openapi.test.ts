import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { createApiRouter } from '../../src/api';
import { says } from '../../src/api/describe';
import { ApiRoutes } from '../../src/api/routes';
import { useHarness } from '../support/harness';
import { TMP_DIR } from '../support/test-db';

type Operation = {
  summary: string;
  tags?: string[];
  security?: unknown[];
  parameters?: { name: string; in: string; required: boolean; schema: Record<string, unknown> }[];
  requestBody?: { content: Record<string, { schema: { properties: Record<string, Record<string, unknown>>; required?: string[] } }> };
  responses: Record<string, unknown>;
};
type Doc = { openapi: string; paths: Record<string, Record<string, Operation>>; components: { securitySchemes: Record<string, unknown> }; security: unknown[] };

const VALIDATOR_CLI = path.join(path.dirname(require.resolve('@seriousme/openapi-schema-validator/package.json')), 'bin', 'validate-api-cli.js');

describe('OpenAPI document', () => {
  const h = useHarness();
  let doc: Doc;

  beforeAll(async () => {
    doc = (await request(h.runtime.app).get('/api/v1/openapi.json').expect(200)).body;
  });

  test('when fetched without keys then it answers the document, cacheable, with an ETag that answers 304', async () => {
    const res = await request(h.runtime.app).get('/api/v1/openapi.json').expect(200).expect('Content-Type', /application\/json/);
    expect(res.body.openapi).toBe('3.1.0');
    const etag = res.headers.etag;
    expect(etag).toBeTruthy();
    await request(h.runtime.app).get('/api/v1/openapi.json').set('If-None-Match', etag).expect(304);
    // Every other route still wants its keys.
    expect((await request(h.runtime.app).get('/api/v1/contacts-type').expect(401)).body.status).toBe('failed');
  });

  test('when every mounted route is looked up then each method and path is in the document with a summary and its 200 answer', () => {
    const mounted = createApiRouter(h.runtime.config, h.runtime.services, h.runtime.logger).table.list();
    expect(mounted.length).toBeGreaterThan(70);
    const missing = mounted.filter(([method, p]) => !doc.paths[p]?.[method.toLowerCase()]);
    expect(missing).toEqual([]);
    for (const [method, p] of mounted) {
      const op = doc.paths[p][method.toLowerCase()];
      expect({ route: `${method} ${p}`, summary: typeof op.summary, tagged: (op.tags ?? []).length, ok: '200' in op.responses }).toEqual({
        route: `${method} ${p}`,
        summary: 'string',
        tagged: 1,
        ok: true,
      });
    }
    // Nothing in the document that is not mounted.
    const documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    expect(documented.sort()).toEqual(mounted.map(([m, p]) => `${m} ${p}`).sort());
  });

  test('when checked by an OpenAPI 3.1 validator then the document is valid', () => {
    fs.mkdirSync(TMP_DIR, { recursive: true });
    const file = path.join(TMP_DIR, `openapi-${process.pid}.json`);
    fs.writeFileSync(file, JSON.stringify(doc));
    try {
      const out = execFileSync(process.execPath, [VALIDATOR_CLI, file], { encoding: 'utf8' });
      expect(JSON.parse(out)).toEqual({ valid: true });
    } catch (err) {
      throw new Error(`the validator refused the document: ${(err as { stdout?: string }).stdout ?? err}`);
    } finally {
      fs.rmSync(file, { force: true });
    }
  });

  test('when a route takes parameters then the document gives them from the rules that validate them', () => {
    const add = doc.paths['/contacts-type/add'].post.requestBody!;
    expect(Object.keys(add.content).sort()).toEqual(['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data']);
    const form = add.content['application/x-www-form-urlencoded'].schema;
    expect(form.required).toEqual(['name']);
    expect(form.properties.name).toMatchObject({ type: 'string', minLength: 2 });

    const sender = doc.paths['/sender/save'].post.requestBody!.content['application/json'].schema;
    expect(sender.required).toEqual(['from_name', 'from_email', 'reply_to_email', 'country_id', 'company_address', 'nickname']);
    expect(sender.properties.company_address).toMatchObject({ type: 'string', maxLength: 255 });
    expect(sender.properties.from_email).toMatchObject({ format: 'email' });

    const schedule = doc.paths['/automations/schedule/create'].post.requestBody!.content['application/json'].schema;
    expect(schedule.properties.waiting_type).toMatchObject({ type: 'string', enum: ['instantly', 'days', 'hours'] });
    expect(schedule.required).toEqual(expect.arrayContaining(['utr', 'sender_id', 'subject', 'waiting_type']));

    const view = doc.paths['/contacts-type/view'].get.parameters!;
    expect(view).toEqual([expect.objectContaining({ name: 'contact_type_id', in: 'query', required: true, schema: { type: 'integer' } })]);
    // A GET reads utr from the query; paging is described on every list.
    expect(doc.paths['/automations/details'].get.parameters!.map((p) => [p.name, p.in, p.required])).toEqual([['utr', 'query', true]]);
    expect(doc.paths['/contacts/list'].get.parameters!.map((p) => p.name)).toEqual(['page', 'per_page', 'search']);

    // An upload is multipart only, with its file.
    const upload = doc.paths['/contacts/upload-csv'].post.requestBody!;
    expect(Object.keys(upload.content)).toEqual(['multipart/form-data']);
    expect(upload.content['multipart/form-data'].schema.properties.file).toMatchObject({ type: 'string', format: 'binary' });
    expect(upload.content['multipart/form-data'].schema.required).toEqual(['contact_type_id', 'file']);

    expect(doc.paths['/contacts/bulk-delete'].post.requestBody!.content['application/json'].schema.properties.strIds).toMatchObject({ type: 'array', maxItems: 1000 });
  });

  test('when a parameter or an answer is an array then the document says what it holds', () => {
    const untyped: string[] = [];
    const walk = (node: unknown, at: string) => {
      if (node === null || typeof node !== 'object') return;
      const schema = node as Record<string, unknown>;
      const types = ([] as unknown[]).concat(schema.type ?? []);
      if (types.includes('array') && !('items' in schema) && !('prefixItems' in schema)) untyped.push(at);
      for (const [key, value] of Object.entries(schema)) walk(value, `${at}/${key}`);
    };
    walk(doc, '#');
    expect(untyped).toEqual([]);
    for (const route of ['/webhooks/save', '/webhooks/update']) {
      const events = doc.paths[route].post.requestBody!.content['application/json'].schema.properties.events;
      expect(events).toMatchObject({ type: 'array', items: { type: 'string', enum: expect.arrayContaining(['contact.created', 'message.delivered']) } });
    }
  });

  test('when a segment is saved or updated then the document lists the relative-date and engagement operators and what an engagement value is', () => {
    for (const route of ['/segment/save', '/segment/update']) {
      const body = doc.paths[route].post.requestBody!.content['application/json'].schema.properties;
      expect(body.select_operator).toMatchObject({
        type: 'array',
        items: { type: 'string', enum: expect.arrayContaining(['in the last', 'more than ago', 'opened', 'not opened', 'clicked', 'not clicked', 'was sent']) },
      });
      expect(String(body.select_field.description)).toContain('`engagement`');
      expect(String(body.value.description)).toContain('`utr` or `any`');
    }
  });

  test('when keys are described then they are the two headers the reference names, required together, and the document itself needs none', () => {
    expect(doc.components.securitySchemes).toEqual({
      PublicKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'PublicKey' }),
      SecretKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'SecretKey' }),
    });
    expect(doc.security).toEqual([{ PublicKey: [], SecretKey: [] }]);
    expect(doc.paths['/openapi.json'].get.security).toEqual([]);
    expect(doc.paths['/contacts-type'].get.security).toBeUndefined();
    expect(doc.paths['/contacts-type'].get.responses['401']).toBeDefined();
  });

  test('when an answer does not match the document then the check names the route and the member', async () => {
    const account = await h.account();
    const res = await request(h.runtime.app).get('/api/v1/contacts-type').set(account.headers).expect(200);
    expect(() => h.openApi.check(res)).not.toThrow();
    res.body = { status: 'success', message: { contactTypes: [{ id: '1' }] } };
    expect(() => h.openApi.check(res)).toThrow(/^GET \/api\/v1\/contacts-type answered 200, which does not match the OpenAPI document/);
    expect(() => h.openApi.check(res)).toThrow("/message/contactTypes/0/id must be integer");
    expect(() => h.openApi.check(res)).toThrow("/message/contactTypes/0 must have required property 'name'");
  });

  test('when a route is registered without its description then registering it fails with a plain message', () => {
    const routes = new ApiRoutes(h.runtime.config);
    const untyped = routes as unknown as { get(path: string, ...handlers: unknown[]): void };
    expect(() => untyped.get('/webhooks', () => undefined)).toThrow(
      'GET /webhooks is registered without its description: pass { summary, response } (DEVELOPERS.md, "Describing an API route").',
    );
    routes.get('/webhooks', { summary: 'List webhooks', response: says('ok') }, () => undefined);
    expect(routes.list()).toEqual([['GET', '/webhooks']]);
  });
});
