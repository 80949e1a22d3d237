import { up as normaliseStoredKeys } from '../../migrations/20261123_0632_idna-email-keys';
import { nowValue } from '../../src/db/dialect';
import { emailKey } from '../../src/lib/email-key';
import { addContact, addContactType, countryId, sendingFixtures, testWorker } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';

/** `bücher.example` and `xn--bcher-kva.example` are one domain: its Unicode and its IDNA ASCII form. */
describe('addresses whose domain is written in Unicode or in its ASCII form', () => {
  const h = useHarness();
  const f = sendingFixtures(h);
  const sink = useSmtpSink();
  let france: number;

  beforeAll(async () => {
    france = await countryId(h, 'FR');
  });

  test('when keys are made then case and the domain form are ignored, the local part only lower-cased', () => {
    expect(emailKey(' User@Bücher.Example ')).toBe('user@xn--bcher-kva.example');
    expect(emailKey('user@XN--BCHER-KVA.example')).toBe('user@xn--bcher-kva.example');
    expect(emailKey('user@例え.テスト')).toBe('user@xn--r8jz45g.xn--zckzah');
    expect(emailKey('Jösé@Example.COM')).toBe('jösé@example.com');
  });

  test('when a contact exists under one form then adding or renaming another to the other form is 422 taken', async () => {
    const alice = await h.account();
    const type = await addContactType(h, alice, 'Readers');
    await addContact(h, alice, { contact_type_id: type, email: 'user@bücher.example', country: france });
    const taken = { status: 'failed', errors: { email: ['The email has already been taken.'] } };
    const again = await h.api(alice).post('/contacts/add').send({ contact_type_id: type, email: 'USER@xn--bcher-kva.example', country: france }).expect(422);
    expect(again.body).toEqual(taken);
    const other = await addContact(h, alice, { contact_type_id: type, email: 'other@xn--bcher-kva.example', country: france });
    const rename = await h.api(alice).post('/contacts/update').send({ contact_id: other, contact_type_id: type, email: 'user@BÜCHER.example', country: france });
    expect(rename.status).toBe(422);
    expect(rename.body).toEqual(taken);
  });

  test('when an import has both forms of an address then it is one contact, updated by the later row', async () => {
    const alice = await h.account();
    const type = await addContactType(h, alice, 'Imported');
    await addContact(h, alice, { contact_type_id: type, email: 'known@bücher.example', country: france });
    const csv = 'email,first_name\nknown@xn--bcher-kva.example,Known\nann@bücher.example,First\nANN@xn--bcher-kva.example,Later\n';
    const res = await h.api(alice).post('/contacts/upload-csv').field('contact_type_id', String(type)).attach('file', Buffer.from(csv), 'c.csv').expect(200);
    expect(res.body.summary).toMatchObject({ rows: 3, created: 1, updated: 2, skipped: 0 });
    const contacts = (await h.api(alice).get('/contacts/list').expect(200)).body.message.contacts;
    expect(contacts.map((c: { email: string; first_name: string }) => [c.email, c.first_name]).sort()).toEqual([
      ['ANN@xn--bcher-kva.example', 'Later'],
      ['known@xn--bcher-kva.example', 'Known'],
    ]);
  });

  test('when both forms are unsubscribed then one row stays, however often', async () => {
    const alice = await h.account();
    await h.api(alice).post('/global-unsubscribes/save').field('email_address', 'a@bücher.example, A@xn--bcher-kva.example').expect(200);
    await h.api(alice).post('/global-unsubscribes/save').field('email_address', 'a@XN--BCHER-KVA.EXAMPLE').expect(200);
    const list = (await h.api(alice).get('/global-unsubscribes').expect(200)).body.message.unSubscribers;
    expect(list.map((u: { email_address: string }) => u.email_address)).toEqual(['a@bücher.example']);
  });

  test('when a send reaches one address in both forms then it gets one message, and an unsubscribe in one form stops the other', async () => {
    const alice = await h.account();
    const { sender, group, type } = await f.basics(alice, 'Customers');
    await addContact(h, alice, { contact_type_id: type, email: 'user@bücher.example', country: france, first_name: 'Uli' });
    await addContact(h, alice, { contact_type_id: type, email: 'gone@bücher.example', country: france });
    await h.api(alice).post('/segment/save').send({ segment_name: 'Picked', contact_type_id: type, select_field: ['email'], select_operator: ['is'], value: ['nobody@example.org'] }).expect(200);
    const segment = Number((await h.runtime.db('segments').where({ user_id: alice.user_id }).first('id')).id);
    await h.api(alice).post('/segment/email/store').send({ segment_id: segment, first_name: 'U', last_name: 'B', email: 'USER@xn--bcher-kva.example' }).expect(200);
    await h.api(alice).post('/global-unsubscribes/save').field('email_address', 'gone@xn--bcher-kva.example').expect(200);
    const sendId = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }, { segment }] });

    sink.messages.splice(0);
    const { worker, close } = testWorker(h, sink.url);
    try {
      await worker.runOnce();
    } finally {
      await close();
    }
    expect(sink.messages).toHaveLength(1);
    expect(sink.messages[0].to[0].toLowerCase()).toMatch(/^user@(bücher|xn--bcher-kva)\.example$/);
    expect(await h.runtime.db('single_sends').where({ id: sendId }).first('triggered', 'delivered')).toMatchObject({ triggered: 1, delivered: 1 });
  });

  test('when stored keys predate the ASCII form then the migration rewrites them and merges the rows that meet', async () => {
    const alice = await h.account();
    const type = await addContactType(h, alice, 'Old');
    const now = nowValue();
    const contact = (email: string, key: string) => ({ user_id: alice.user_id, contact_type_id: type, email, email_key: key, created_at: now, updated_at: now });
    const [ascii] = await h.runtime.db('contacts').insert(contact('old@xn--bcher-kva.example', 'old@xn--bcher-kva.example')).returning('id');
    const [unicode] = await h.runtime.db('contacts').insert(contact('old@Bücher.example', 'old@bücher.example')).returning('id');
    const [alone] = await h.runtime.db('contacts').insert(contact('solo@Bücher.example', 'solo@bücher.example')).returning('id');
    const unsubscribe = (key: string) => ({ user_id: alice.user_id, email_address: key, email_key: key, created_at: now, updated_at: now });
    await h.runtime.db('global_unsubscribes').insert([unsubscribe('old@bücher.example'), unsubscribe('old@xn--bcher-kva.example'), unsubscribe('solo@bücher.example')]);

    await normaliseStoredKeys(h.runtime.db);

    const idOf = (r: unknown) => Number(typeof r === 'object' ? (r as { id: number }).id : r);
    const rows = await h.runtime.db('contacts').where({ user_id: alice.user_id }).orderBy('id').select('id', 'email', 'email_key', 'deleted_at');
    expect(rows.map((r) => [Number(r.id), r.email, r.email_key, r.deleted_at === null])).toEqual([
      [idOf(ascii), 'old@xn--bcher-kva.example', 'old@xn--bcher-kva.example', true],
      [idOf(unicode), 'old@Bücher.example', 'old@xn--bcher-kva.example', false],
      [idOf(alone), 'solo@Bücher.example', 'solo@xn--bcher-kva.example', true],
    ]);
    expect(await h.runtime.db('global_unsubscribes').where({ user_id: alice.user_id }).orderBy('email_key').pluck('email_key')).toEqual([
      'old@xn--bcher-kva.example',
      'solo@xn--bcher-kva.example',
    ]);
  });
});
