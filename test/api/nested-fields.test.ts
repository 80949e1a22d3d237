import { createApiRouter } from '../../src/api';
import { addContactType } from '../support/fixtures';
import { useHarness } from '../support/harness';

/** What a parameter described by `schema` is called when it is not one value (the reference's Laravel sentences). */
function expectedMessage(name: string, schema: Record<string, unknown>): string | undefined {
  const human = name.replace(/_/g, ' ');
  const e = schema.enum as unknown[] | undefined;
  if (schema.type === 'integer' && e?.length === 2 && e.includes(0) && e.includes(1)) return `The ${human} field must be true or false.`;
  if (e) return `The selected ${human} is invalid.`;
  if (schema.type === 'string') return `The ${human} must be a string.`;
  if (schema.type === 'integer') return `The ${human} must be an integer.`;
  if (schema.type === 'number') return `The ${human} must be a number.`;
  return undefined;
}

type Encoding = 'multipart' | 'urlencoded' | 'json' | 'query';

/**
 * Nested keys make objects in every body encoding (`a[b]=1` in urlencoded and multipart fields,
 * objects in JSON) and in the query: a field that holds one value refuses them with a 422
 * naming the field, never a 500 and never "[object Object]" read as text.
 */
describe('nested values where one value belongs', () => {
  const h = useHarness();
  const [alice] = h.accounts(1);
  let type: number;
  beforeAll(async () => {
    type = await addContactType(h, alice, 'Nested');
  });

  const send = (method: string, path: string, encoding: Encoding, fields: Record<string, unknown>, pairs: [string, string][]) => {
    const api = h.api(alice);
    if (encoding === 'query') {
      const query = pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
      return method === 'GET' ? api.get(`${path}?${query}`) : api.delete(`${path}?${query}`);
    }
    const post = api.post(path);
    if (encoding === 'json') return post.send(fields);
    if (encoding === 'urlencoded') return post.type('form').send(pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&'));
    for (const [k, v] of pairs) post.field(k, v);
    return post;
  };

  test('when a segment condition is nested in multipart, urlencoded or JSON then 422 names it and nothing is saved', async () => {
    const base = { segment_name: 'Nested', contact_type_id: String(type) };
    const cases: { fields: Record<string, unknown>; pairs: [string, string][]; errors: Record<string, string[]> }[] = [
      {
        fields: { ...base, query_type: { a: '1' }, select_field: ['email'], select_operator: ['contains'], value: ['x'] },
        pairs: [['segment_name', 'Nested'], ['contact_type_id', String(type)], ['query_type[a]', '1'], ['select_field[0]', 'email'], ['select_operator[0]', 'contains'], ['value[0]', 'x']],
        errors: { query_type: ['The selected query type is invalid.'] },
      },
      {
        fields: { ...base, select_field: [{ a: 'email' }], select_operator: ['contains'], value: ['x'] },
        pairs: [['segment_name', 'Nested'], ['contact_type_id', String(type)], ['select_field[0][a]', 'email'], ['select_operator[0]', 'contains'], ['value[0]', 'x']],
        errors: { 'select_field.0': ['The select field.0 must be a string.'] },
      },
      {
        fields: { ...base, select_field: ['email'], select_operator: ['contains'], value: [['x']] },
        pairs: [['segment_name', 'Nested'], ['contact_type_id', String(type)], ['select_field[0]', 'email'], ['select_operator[0]', 'contains'], ['value[0][0]', 'x']],
        errors: { 'value.0': ['The value.0 must be a string.'] },
      },
      {
        fields: { segment_name: { a: 'x' }, contact_type_id: [String(type)] },
        pairs: [['segment_name[a]', 'x'], ['contact_type_id[0]', String(type)]],
        errors: { segment_name: ['The segment name must be a string.'], contact_type_id: ['The contact type id must be an integer.'] },
      },
    ];
    for (const route of ['/segment/save', '/segment/update']) {
      for (const encoding of ['multipart', 'urlencoded', 'json'] as const) {
        for (const c of cases) {
          const res = await send('POST', route, encoding, c.fields, c.pairs);
          const errors = route === '/segment/update' ? { ...c.errors } : c.errors;
          expect({ route, encoding, status: res.status, errors: pick(res.body.errors, Object.keys(errors)) }).toEqual({ route, encoding, status: 422, errors });
        }
      }
    }
    expect((await h.api(alice).get('/segment/list').expect(200)).body.message.segments ?? []).toEqual([]);
  });

  test('when any one-value field of any route is sent as an object then 422 names it, whichever encoding the route reads', async () => {
    const table = createApiRouter(h.runtime.config, h.runtime.services, h.runtime.logger).table;
    const cases: { method: string; path: string; name: string; encoding: Encoding; message: string }[] = [];
    for (const route of table.routes()) {
      for (const p of route.params) {
        const message = expectedMessage(p.name, p.schema);
        if (message === undefined || p.schema.format === 'binary') continue;
        const inQuery = p.in === 'query' || (p.in === 'either' && route.method !== 'POST');
        if (inQuery && route.method === 'POST') continue;
        // Every encoding the route reads takes its turn across the fields (the check is one layer for all).
        const encodings: Encoding[] = inQuery ? ['query'] : route.upload ? ['multipart'] : ['multipart', 'urlencoded', 'json'];
        cases.push({ method: route.method, path: route.path, name: p.name, encoding: encodings[cases.length % encodings.length], message });
      }
    }
    expect(cases.length).toBeGreaterThan(100);
    expect(new Set(cases.map((c) => c.encoding))).toEqual(new Set(['multipart', 'urlencoded', 'json', 'query']));
    const failures: unknown[] = [];
    for (let i = 0; i < cases.length; i += 8) {
      await Promise.all(
        cases.slice(i, i + 8).map(async (c) => {
          const res = await send(c.method, c.path, c.encoding, { [c.name]: { a: '1' } }, [[`${c.name}[a]`, '1']]);
          const got = { status: res.status, errors: res.body?.errors?.[c.name] };
          if (got.status !== 422 || JSON.stringify(got.errors) !== JSON.stringify([c.message])) failures.push({ route: `${c.method} ${c.path}`, field: c.name, encoding: c.encoding, got });
        }),
      );
    }
    expect(failures).toEqual([]);
  });
});

function pick(errors: unknown, keys: string[]): Record<string, unknown> {
  const e = (errors ?? {}) as Record<string, unknown>;
  return Object.fromEntries(keys.map((k) => [k, e[k]]));
}
