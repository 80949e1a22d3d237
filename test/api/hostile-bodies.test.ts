import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import type request from 'supertest';
import { addContactType, countryId } from '../support/fixtures';
import { useHarness } from '../support/harness';

/** Bodies that lie about themselves, overflow a parser or carry control characters: never a 500. */
describe('hostile request bodies', () => {
  const h = useHarness();
  const [alice] = h.accounts(1);
  let type: number;
  let germany: number;

  beforeAll(async () => {
    type = await addContactType(h, alice, 'Hostile');
    germany = await countryId(h, 'DE');
  });

  /** Sends the bytes as they are, with the headers given (supertest would serialize a Buffer as a form). */
  const raw = (test: request.Test, headers: Record<string, string>, bytes: Buffer | string) =>
    test.set(headers).serialize((b: unknown) => b as string).send(bytes as string);

  const typeNames = async () => (await h.api(alice).get('/contacts-type').expect(200)).body.message.contactTypes.map((t: { name: string }) => t.name);

  test('when a body claims gzip, deflate or br but is not then 400 in the envelope, and nothing is written', async () => {
    for (const encoding of ['gzip', 'deflate', 'br']) {
      for (const [contentType, body] of [['application/json', '{"name":"Liar"}'], ['application/x-www-form-urlencoded', 'name=Liar']]) {
        const res = await raw(h.api(alice).post('/contacts-type/add'), { 'Content-Type': contentType, 'Content-Encoding': encoding }, body);
        expect({ encoding, contentType, status: res.status, body: res.body }).toEqual({
          encoding,
          contentType,
          status: 400,
          body: { status: 'failed', errors: 'The request body could not be read: it does not match its Content-Encoding.' },
        });
      }
    }
    expect(await typeNames()).not.toContain('Liar');
  });

  test('when a body is honestly compressed then it is read', async () => {
    const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
    await raw(h.api(alice).post('/contacts-type/add'), { ...form, 'Content-Encoding': 'gzip' }, gzipSync('name=Zipped')).expect(200);
    await raw(h.api(alice).post('/contacts-type/add'), { ...form, 'Content-Encoding': 'deflate' }, deflateSync('name=Deflated')).expect(200);
    await raw(h.api(alice).post('/contacts-type/add'), { 'Content-Type': 'application/json', 'Content-Encoding': 'br' }, brotliCompressSync('{"name":"Brotli"}')).expect(200);
    expect(await typeNames()).toEqual(expect.arrayContaining(['Zipped', 'Deflated', 'Brotli']));
  });

  test('when the encoding is unknown, or a multipart body claims any encoding, then 415 in the envelope', async () => {
    const unknown = await raw(h.api(alice).post('/contacts-type/add'), { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Encoding': 'zstd-ish' }, 'name=Odd');
    expect({ status: unknown.status, body: unknown.body }).toEqual({ status: 415, body: { status: 'failed', errors: 'The body encoding is not supported.' } });
    const multipart = await h.api(alice).post('/contacts-type/add').set('Content-Encoding', 'gzip').field('name', 'Multi');
    expect({ status: multipart.status, body: multipart.body }).toEqual({ status: 415, body: { status: 'failed', errors: 'The body encoding is not supported.' } });
    const upload = await h.api(alice).post('/contacts/upload-csv').set('Content-Encoding', 'gzip')
      .field('contact_type_id', String(type)).attach('file', Buffer.from('email\na@example.com\n'), 'c.csv');
    expect({ status: upload.status, body: upload.body }).toEqual({ status: 415, body: { status: 'failed', errors: 'The body encoding is not supported.' } });
    expect(await typeNames()).not.toEqual(expect.arrayContaining(['Odd']));
    expect(await typeNames()).not.toEqual(expect.arrayContaining(['Multi']));
  });

  test('when urlencoded keys nest deeper than the parser allows then 422 in the envelope', async () => {
    const res = await h.api(alice).post('/contacts-type/add').type('form').send(`name${'[a]'.repeat(40)}=x`);
    expect({ status: res.status, body: res.body }).toEqual({ status: 422, body: { status: 'failed', errors: { body: ['The body is nested too deeply.'] } } });
    const json = await h.api(alice).post('/contacts-type/add').type('json').send(`{"name":"Deep","extra":${'['.repeat(5000)}${']'.repeat(5000)}}`);
    expect({ status: json.status, body: json.body }).toEqual({ status: 422, body: { status: 'failed', errors: { body: ['The body is nested too deeply.'] } } });
  });

  test('when a multipart body has too many fields then 413, like its urlencoded twin', async () => {
    const names = Array.from({ length: 20001 }, (_, i) => `f${i}`);
    const boundary = 'many-fields';
    const parts = names.map((name) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\nx\r\n`).join('') + `--${boundary}--\r\n`;
    const many = await raw(h.api(alice).post('/contacts-type/add'), { 'Content-Type': `multipart/form-data; boundary=${boundary}` }, parts);
    const urlencoded = await h.api(alice).post('/contacts-type/add').type('form').send(names.map((name) => `${name}=x`).join('&'));
    expect({ status: many.status, body: many.body }).toEqual({ status: 413, body: { status: 'failed', errors: 'The request has too many parameters.' } });
    expect({ status: urlencoded.status, body: urlencoded.body }).toEqual({ status: many.status, body: many.body });
  });

  test('when a text field holds a NUL or another control character then 422 names it, and nothing is stored', async () => {
    for (const bad of ['Nul\u0000name', 'Bell\u0007', 'Esc\u001b[31m']) {
      const res = await h.api(alice).post('/contacts-type/add').send({ name: bad });
      expect({ status: res.status, body: res.body }).toEqual({ status: 422, body: { status: 'failed', errors: { name: ['The name must not contain control characters.'] } } });
    }
    const contact = await h.api(alice).post('/contacts/add')
      .send({ contact_type_id: type, email: 'nul@example.com', country: germany, first_name: 'A\u0000', city: 'B\u0001' });
    expect({ status: contact.status, body: contact.body }).toEqual({
      status: 422,
      body: { status: 'failed', errors: { first_name: ['The first name must not contain control characters.'], city: ['The city must not contain control characters.'] } },
    });
    // A field no rule names (a custom field value, a key the route ignores) is refused all the same.
    const custom = await h.api(alice).post('/contacts/add')
      .send({ contact_type_id: type, email: 'nul@example.com', country: germany, custom_field: { age: '4\u00002' }, stray: ['ok', 'x\u0000'] });
    expect({ status: custom.status, body: custom.body }).toEqual({
      status: 422,
      body: { status: 'failed', errors: { 'custom_field[age]': ['The age must not contain control characters.'], stray: ['The stray must not contain control characters.'] } },
    });
    const key = await h.api(alice).post('/contacts/add').send({ contact_type_id: type, email: 'nul@example.com', country: germany, custom_field: { 'a\u0000': '1' } });
    expect({ status: key.status, body: key.body }).toEqual({ status: 422, body: { status: 'failed', errors: { body: ['The body field names must not contain control characters.'] } } });
    const list = (await h.api(alice).get('/contacts/list').expect(200)).body.message.contacts.map((c: { email: string }) => c.email);
    expect(list).not.toContain('nul@example.com');
    expect(await typeNames()).not.toEqual(expect.arrayContaining([expect.stringMatching(/^(Nul|Bell|Esc)/)]));
  });

  test('when a text holds TAB, CR or LF then it is kept as written', async () => {
    const res = await h.api(alice).post('/unsubscribes-groups/save').send({ group_name: 'Lines', description: 'one\r\ntwo\tthree', is_display: 1 }).expect(200);
    expect(res.body.status).toBe('success');
    const groups = (await h.api(alice).get('/unsubscribes-groups').expect(200)).body.message;
    expect(JSON.stringify(groups)).toContain('one\\r\\ntwo\\tthree');
  });

  test('when the search query holds a control character then 422 names it', async () => {
    const res = await h.api(alice).get('/contacts/list?search=a%00b');
    expect({ status: res.status, body: res.body }).toEqual({ status: 422, body: { status: 'failed', errors: { search: ['The search must not contain control characters.'] } } });
  });

  test('when an address has a control character in its local part or domain then it is not a valid email', async () => {
    const local = await h.api(alice).post('/global-unsubscribes/save').send({ email_address: 'a\u0001b@example.com' });
    expect({ status: local.status, body: local.body }).toEqual({
      status: 422,
      body: { status: 'failed', errors: { email_address: ['The email address must not contain control characters.'] } },
    });
    const contact = await h.api(alice).post('/contacts/add').send({ contact_type_id: type, email: 'ab@exa\u007fmple.com', country: germany });
    expect({ status: contact.status, body: contact.body }).toEqual({
      status: 422,
      body: { status: 'failed', errors: { email: ['The email must be a valid email address.'] } },
    });
    // Inside a list the one rule of the whole field names it; its entries are checked as addresses too.
    const del = await h.api(alice).post('/global-unsubscribes/save').send({ email_address: 'ok@example.com, ab@exa\u007fmple.com' });
    expect({ status: del.status, body: del.body }).toEqual({
      status: 422,
      body: { status: 'failed', errors: { email_address: ['The email address must contain valid email addresses only; invalid: ab@exa\u007fmple.com.'] } },
    });
  });

  test('when a CSV cell holds a control character then that row is skipped with the reason', async () => {
    const csv = ['email,first_name,city', 'clean@example.com,Clean,Berlin', 'dirty@example.com,Dir\u0000ty,Berlin', 'bell@example.com,Bell,Ber\u0007lin', 'tab@example.com,"Two\tWords",Berlin'].join('\n');
    const res = await h.api(alice).post('/contacts/upload-csv').field('contact_type_id', String(type)).attach('file', Buffer.from(csv), 'c.csv').expect(200);
    expect(res.body.summary).toEqual({
      rows: 4,
      created: 2,
      updated: 0,
      skipped: 2,
      unsubscribed: 0,
      errors: [
        { row: 3, reason: 'The first name must not contain control characters.' },
        { row: 4, reason: 'The city must not contain control characters.' },
      ],
    });
  });
});
