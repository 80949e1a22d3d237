import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { isPostgres } from '../../src/db';
import { addContact, addContactType, addCustomField, countryId } from '../support/fixtures';
import { useHarness } from '../support/harness';

/**
 * `GET /contacts/list` streams its body in chunks; whatever the values, each contact must come
 * back exactly as stored, in one valid JSON document, newest first.
 */
describe('the contact list body', () => {
  const h = useHarness();
  const onPostgres = () => isPostgres(h.runtime.db);
  /** Every control character (PostgreSQL text holds no NUL). */
  const controls = () => Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('').slice(onPostgres() ? 1 : 0) + '\u007f';

  test('when contacts hold awkward text then the list gives each back exactly', async () => {
    const account = await h.account();
    const type = await addContactType(h, account, 'Zoë\'s "best" \\ list 🚲');
    await addCustomField(h, account, 'company', 'text');
    await addCustomField(h, account, '2024', 'text');
    const france = await countryId(h, 'FR');
    const base = { user_id: account.user_id, contact_type_id: type, created_at: '2026-11-25T06:00:00.123Z', updated_at: '2026-11-25T07:30:00.000Z' };
    await h.runtime.db('contacts').insert({
      ...base, first_name: 'Zoë "Z"', last_name: 'O\\Brien\u2028', email: 'zoe+\t@example.org', email_key: 'zoe', city: 'Kraków 🚲', country: france,
      state: `x${controls()}y`, address_line1: '</script><!-- \u0085 \u200b', custom_fields: JSON.stringify({ company: 'A"c\\m\ne\u2029', 2024: 'yes' }),
    });
    await h.runtime.db('contacts').insert({ ...base, first_name: ' \ufeffAda\u00a0', last_name: '\u3000', email: 'ada@example.org', email_key: 'ada', custom_fields: null });

    const res = await request(h.runtime.app).get('/api/v1/contacts/list').set(account.headers).expect(200);
    const [ada, zoe] = JSON.parse(res.text).message.contacts;
    const contactType = { id: type, user_id: account.user_id, name: 'Zoë\'s "best" \\ list 🚲', deleted_at: null, created_at: expect.any(String), updated_at: expect.any(String) };
    expect(zoe).toEqual({
      id: expect.any(Number), user_id: account.user_id, contact_type_id: type,
      first_name: 'Zoë "Z"', last_name: 'O\\Brien\u2028', email: 'zoe+\t@example.org', alt_email: null, country: 'France',
      state: `x${controls()}y`, city: 'Kraków 🚲', address_line1: '</script><!-- \u0085 \u200b', address_line2: '', state_province_region: '', postal_code: '', time_zone: null,
      custom_field: { company: { field_name: 'company', field_value: 'A"c\\m\ne\u2029' }, 2024: { field_name: '2024', field_value: 'yes' } },
      deleted_at: null, created_at: '2026-11-25T06:00:00.123000Z', updated_at: '2026-11-25T07:30:00.000000Z',
      fullname: 'Zoë "Z" O\\Brien', contact_type: contactType,
    });
    expect(ada).toMatchObject({
      first_name: ' \ufeffAda\u00a0', last_name: '\u3000', fullname: 'Ada',
      custom_field: { company: { field_name: 'company', field_value: null }, 2024: { field_name: '2024', field_value: null } },
    });
  });

  test('when a list is longer than a chunk then every contact comes once, whole and in order', async () => {
    const account = await h.account();
    const type = await addContactType(h, account, 'Long');
    await addCustomField(h, account, 'note', 'text');
    const rows = Array.from({ length: 2500 }, (_, i) => ({
      user_id: account.user_id,
      contact_type_id: type,
      email: `long${i}@example.org`,
      email_key: `long${i}@example.org`,
      first_name: `Name ${i} "q"`,
      custom_fields: JSON.stringify({ note: `n\\${i}` }),
      created_at: '2026-11-25T06:00:00.123Z',
      updated_at: '2026-11-25T06:00:00.123Z',
    }));
    for (let i = 0; i < rows.length; i += 200) await h.runtime.db('contacts').insert(rows.slice(i, i + 200));
    const res = await request(h.runtime.app).get('/api/v1/contacts/list').set(account.headers).expect(200);
    const contacts = JSON.parse(res.text).message.contacts as Array<{ first_name: string; custom_field: { note: { field_value: string } } }>;
    expect(contacts.map((c) => c.first_name)).toEqual(rows.map((r) => r.first_name).reverse());
    expect(contacts.map((c) => c.custom_field.note.field_value)).toEqual(rows.map((_, i) => `n\\${i}`).reverse());
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
