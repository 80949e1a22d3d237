import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { isPostgres } from '../../src/db';
import { contactListQuery, contactListRowSql, contactRecord, withListTypes } from '../../src/services/audience/contact-records';
import { customFieldDefs } from '../../src/services/audience/custom-field-values';
import { addContact, addContactType, addCustomField, countryId } from '../support/fixtures';
import { TestAccount, useHarness } from '../support/harness';

/**
 * `GET /contacts/list` is written by the database (contactListRowSql) where it can, by Node
 * where it cannot; either way the body must be byte for byte what the list wrote before, the
 * contact records stringified. Awkward values on purpose: quotes, backslashes, every control
 * character, line separators, emoji and other scripts, JavaScript-only whitespace around
 * names, nulls, custom fields with escapes, index-like field names, odd stored timestamps.
 */
describe('the contact list as the database writes it', () => {
  const h = useHarness();
  const onPostgres = () => isPostgres(h.runtime.db);
  /** Every control character (PostgreSQL text holds no NUL). */
  const controls = () => Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('').slice(onPostgres() ? 1 : 0) + '\u007f';

  /** The old serialiser over the same query: what the body must equal. */
  async function expectedBody(account: TestAccount): Promise<string> {
    const ctx = { userId: account.user_id };
    const defs = await customFieldDefs(h.runtime.services.fields, ctx);
    const rows: Record<string, unknown>[] = await contactListQuery(h.runtime.db, ctx).orderBy('c.id', 'desc');
    return JSON.stringify({ status: 'success', message: { contacts: rows.map((r) => contactRecord(r, defs, 'list')) } });
  }

  /** Each row's text as the database writes it (null where it leaves the row to Node), beside the record stringified. */
  async function rowTexts(account: TestAccount): Promise<Array<{ db: string | null; node: string }>> {
    const ctx = { userId: account.user_id };
    const db = h.runtime.db;
    const defs = await customFieldDefs(h.runtime.services.fields, ctx);
    const rows: Record<string, unknown>[] = await withListTypes(db, ctx, contactListQuery(db, ctx)).select(db.raw(`${contactListRowSql(db, defs)} as j`)).orderBy('c.id', 'desc');
    return rows.map((r) => ({ db: r.j as string | null, node: JSON.stringify(contactRecord(r, defs, 'list')) }));
  }

  async function listBody(account: TestAccount): Promise<string> {
    // Without the harness's OpenAPI check: some rows below hold what no API write stores.
    const res = await request(h.runtime.app).get('/api/v1/contacts/list').set(account.headers).expect(200);
    return res.text;
  }

  async function awkwardAccount(): Promise<TestAccount> {
    const account = await h.account();
    const type = await addContactType(h, account, 'Zoë\'s "best" \\ list 🚲');
    await addCustomField(h, account, 'company', 'text');
    await addCustomField(h, account, '2024', 'text');
    await addCustomField(h, account, 'age', 'number');
    const france = await countryId(h, 'FR');
    const base = { user_id: account.user_id, contact_type_id: type, created_at: '2026-11-25T06:00:00.123Z', updated_at: '2026-11-25T07:30:00.000Z' };
    const rows: Record<string, unknown>[] = [
      { first_name: 'Zoë "Z"', last_name: 'O\\Brien\u2028', email: 'zoe+\t@example.org', city: 'Kraków 🚲', country: france,
        custom_fields: JSON.stringify({ company: 'A"c\\m\ne\u2029', age: '36', 2024: 'yes' }) },
      { first_name: ' \ufeffAda\u00a0', last_name: '\u3000', email: 'ada@example.org', alt_email: 'other@example.org', state: `x${controls()}y`,
        custom_fields: JSON.stringify({ company: null }) },
      { first_name: '', last_name: '  Lovelace ', email: 'l@example.org', address_line1: '</script><!-- \u0085 \u200b', postal_code: '00123',
        custom_fields: null },
      { first_name: 'مرحبا', last_name: '👩‍👩‍👧‍👦', email: 'family@example.org', address_line2: '\u{1f600}\u0301', state_province_region: "O'Neil",
        custom_fields: JSON.stringify({ 2024: '', other: 'not a field' }) },
      { first_name: ' \u2028 ', last_name: '\t', email: 'blank@example.org' },
      { first_name: 'Micro', last_name: 'Seconds', email: 'micro@example.org', created_at: '2026-11-25T06:00:00.999999Z', updated_at: '2026-12-31T23:59:59.000001Z' },
    ];
    for (const [i, row] of rows.entries()) {
      const email = String(row.email);
      await h.runtime.db('contacts').insert({ ...base, ...row, email_key: `${i}-${email.toLowerCase()}` });
    }
    // Through the API, as a client would send them: a lone surrogate in a custom value (which
    // PostgreSQL's jsonb refuses, so there a pair).
    const company = onPostgres() ? 'pair \ud83d\ude00' : 'lone \ud800 half';
    await addContact(h, account, { contact_type_id: type, email: 'api@example.org', first_name: 'Api', country: france, custom_field: { company, age: '1.50' } });
    // A deleted type still shows in its contacts' list entries, with its deleted_at.
    await h.runtime.db('contact_types').where({ id: type }).update({ deleted_at: '2026-11-25T08:00:00.456Z' });
    return account;
  }

  test('when contacts hold awkward text then the database writes each row exactly as the records stringified', async () => {
    const account = await awkwardAccount();
    const texts = await rowTexts(account);
    expect(texts).toHaveLength(7);
    // SQLite leaves two rows to Node: the API's lone surrogate is stored as a \u escape in the
    // JSON column, and the microseconds are not what nowValue() stores. PostgreSQL writes all.
    const toNode = texts.filter((t) => t.db === null).map((t) => JSON.parse(t.node).email);
    expect(toNode).toEqual(onPostgres() ? [] : ['api@example.org', 'micro@example.org']);
    for (const t of texts) if (t.db !== null) expect(t.db).toBe(t.node);
    expect(await listBody(account)).toBe(await expectedBody(account));
  });

  test('when stored values are only readable in Node then those rows fall back and the body is unchanged', async () => {
    const account = await awkwardAccount();
    const db = h.runtime.db;
    const ids: number[] = (await db('contacts').where({ user_id: account.user_id }).orderBy('id').pluck('id')).map(Number);
    if (onPostgres()) {
      // A year the database leaves to Node, custom values that are not strings, a custom_fields that is no object.
      await db('contacts').where({ id: ids[0] }).update({ created_at: '0999-03-04T05:06:07.891Z' });
      await db('contacts').where({ id: ids[1] }).update({ custom_fields: JSON.stringify({ age: 36, company: true, 2024: { a: 1 } }) });
      await db('contacts').where({ id: ids[2] }).update({ custom_fields: JSON.stringify(['x']) });
      await db('contacts').where({ id: ids[3] }).update({ custom_fields: JSON.stringify({ age: 1.0e21, company: 'ok' }) });
    } else {
      // Timestamps not stored as nowValue() writes them, numbers where text is expected,
      // JSON that is not an object or not JSON at all, \u escapes.
      await db('contacts').where({ id: ids[0] }).update({ created_at: '2026-11-25 06:00:00', updated_at: '2026-13-01T00:00:00.000Z' });
      await db('contacts').where({ id: ids[1] }).update({ custom_fields: '{"age":36,"company":true,"2024":{"a":1}}' });
      await db('contacts').where({ id: ids[2] }).update({ custom_fields: '["x"]', postal_code: 12345 });
      await db('contacts').where({ id: ids[3] }).update({ custom_fields: '{not json', updated_at: '' });
      await db('contacts').where({ id: ids[4] }).update({ custom_fields: '{"company":"\\u00e9\\ud83d\\ude00","age":"1e21"}' });
    }
    const foreignType = await addContactType(h, await h.account(), 'Not theirs');
    await db('contacts').where({ id: ids[5] }).update({ contact_type_id: foreignType });
    const texts = await rowTexts(account);
    expect(texts.filter((t) => t.db === null).length).toBeGreaterThanOrEqual(5);
    // A contact filed under another account's type (no write of the app does that) is Node's.
    expect(texts.find((t) => JSON.parse(t.node).email === 'micro@example.org')?.db).toBeNull();
    for (const t of texts) if (t.db !== null) expect(t.db).toBe(t.node);
    expect(await listBody(account)).toBe(await expectedBody(account));
  });

  test('when a text column holds bytes then that row is written by Node', async () => {
    const account = await h.account();
    const type = await addContactType(h, account, 'Bytes');
    await addCustomField(h, account, 'company', 'text');
    const country = await countryId(h, 'FR');
    await addContact(h, account, { contact_type_id: type, country, email: 'bytes@example.org', first_name: 'B', custom_field: { company: 'Acme' } });
    await addContact(h, account, { contact_type_id: type, country, email: 'clean@example.org', first_name: 'C', custom_field: { company: 'Acme' } });
    if (!onPostgres()) {
      // No write of the app stores a blob; x'00' is also JSONB's null, which SQLite's
      // json_object would write as null where the record says "\u0000".
      await h.runtime.db('contacts').where({ user_id: account.user_id, email: 'bytes@example.org' }).update({ address_line2: Buffer.from([0]) });
    }
    const texts = await rowTexts(account);
    const byEmail = (email: string) => texts.find((t) => JSON.parse(t.node).email === email)!;
    // PostgreSQL's text columns hold no bytes: there both rows are the database's.
    expect(byEmail('bytes@example.org').db).toBe(onPostgres() ? byEmail('bytes@example.org').node : null);
    expect(byEmail('clean@example.org').db).toBe(byEmail('clean@example.org').node);
    expect(await listBody(account)).toBe(await expectedBody(account));
  });

  test('when an account has no custom fields then custom_field is null, written by the database', async () => {
    const account = await h.account();
    const type = await addContactType(h, account, 'Plain');
    await addContact(h, account, { contact_type_id: type, country: await countryId(h, 'DE'), email: 'plain@example.org', first_name: 'Plain', last_name: 'Jane' });
    const texts = await rowTexts(account);
    expect(texts).toEqual([{ db: texts[0].node, node: texts[0].node }]);
    expect(JSON.parse(texts[0].node).custom_field).toBeNull();
    expect(await listBody(account)).toBe(await expectedBody(account));
  });

  test('when a long list mixes rows for Node and rows for the database then every chunk is whole and in order', async () => {
    const account = await h.account();
    const type = await addContactType(h, account, 'Long');
    await addCustomField(h, account, 'note', 'text');
    const rows = Array.from({ length: 2500 }, (_, i) => ({
      user_id: account.user_id,
      contact_type_id: type,
      email: `long${i}@example.org`,
      email_key: `long${i}@example.org`,
      first_name: `Name ${i} "q"`,
      // One row in the middle chunk only Node can write.
      custom_fields: i === 1200 ? (onPostgres() ? JSON.stringify({ note: 5 }) : '{"note":5}') : JSON.stringify({ note: `n\\${i}` }),
      created_at: '2026-11-25T06:00:00.123Z',
      updated_at: '2026-11-25T06:00:00.123Z',
    }));
    for (let i = 0; i < rows.length; i += 200) await h.runtime.db('contacts').insert(rows.slice(i, i + 200));
    const body = await listBody(account);
    expect(body).toBe(await expectedBody(account));
    expect(JSON.parse(body).message.contacts).toHaveLength(2500);
  });
});

describe('a reader that stops reading a long list', () => {
  const h = useHarness();

  test('when one reader stops reading then others are served meanwhile, and it gets the whole list when it reads on', async () => {
    const account = await h.account();
    const type = await addContactType(h, account, 'Many');
    const now = new Date().toISOString();
    // About 7 MB of JSON: more than the socket buffers hold, so the server must wait for it.
    const rows = Array.from({ length: 10_000 }, (_, i) => ({
      user_id: account.user_id,
      contact_type_id: type,
      email: `slow${i}@example.org`,
      email_key: `slow${i}@example.org`,
      first_name: `First ${i}`,
      last_name: `Last ${i}`,
      address_line1: `${i} Main Street`,
      created_at: now,
      updated_at: now,
    }));
    for (let i = 0; i < rows.length; i += 500) await h.runtime.db('contacts').insert(rows.slice(i, i + 500));

    const server = http.createServer(h.runtime.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const chunks: Buffer[] = [];
      let slow!: http.IncomingMessage;
      await new Promise<void>((resolve, reject) => {
        http.get({ host: '127.0.0.1', port, path: '/api/v1/contacts/list', headers: account.headers }, (res) => {
          slow = res;
          res.once('data', (c: Buffer) => {
            chunks.push(c);
            res.pause();
            resolve();
          });
        }).on('error', reject);
      });
      const ended = new Promise<void>((resolve) => slow.on('end', resolve));

      // Meanwhile another account lists, a contact is added, and the same list is read whole.
      const other = await h.account();
      const otherType = await addContactType(h, other, 'Few');
      await addContact(h, other, { contact_type_id: otherType, country: await countryId(h, 'FR'), email: 'meanwhile@example.org' });
      expect((await h.api(other).get('/contacts/list').expect(200)).body.message.contacts).toHaveLength(1);
      const whole = await request(h.runtime.app).get('/api/v1/contacts/list').set(account.headers).expect(200);
      expect(whole.body.message.contacts).toHaveLength(10_000);

      slow.on('data', (c: Buffer) => chunks.push(c));
      slow.resume();
      await ended;
      expect(Buffer.concat(chunks).toString('utf8')).toBe(whole.text);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
