import { migrations } from '../../migrations';
import { isPostgres } from '../../src/db';
import type { Keyset } from '../../src/lib/paging';
import { liveContacts } from '../../src/services/audience/contact-records';
import { addContact, addContactType, countryId } from '../support/fixtures';
import { TestAccount, useHarness } from '../support/harness';

/**
 * The list's pages, totals and search, and the types' contact counts, as every kind of write
 * changes the account: the totals come from maintained counts on PostgreSQL and the pages
 * from an id seek, so each page must still be exactly its slice of the whole list.
 */
describe('contacts paging, totals and search', () => {
  const h = useHarness();
  let france: number;

  beforeAll(async () => {
    france = await countryId(h, 'FR');
  });

  type Listed = { id: number; email: string; contact_type_id: number };
  const whole = async (a: TestAccount, query = ''): Promise<Listed[]> => (await h.api(a).get(`/contacts/list${query}`).expect(200)).body.message.contacts;
  const typeCounts = async (a: TestAccount): Promise<Record<string, number>> =>
    Object.fromEntries((await h.api(a).get('/contacts-type').expect(200)).body.message.contactTypes.map((t: { name: string; contacts_count: number }) => [t.name, t.contacts_count]));

  /** Every page of `perPage` against the whole list: each page its slice, each total the list's length. */
  async function expectPagesMatch(a: TestAccount, perPage: number, search = ''): Promise<number> {
    const all = await whole(a, search ? `?search=${encodeURIComponent(search)}` : '');
    const pages = Math.ceil(all.length / perPage) + 1; // and one page past the end
    for (let page = 1; page <= pages; page += 1) {
      const res = await h.api(a).get(`/contacts/list?page=${page}&per_page=${perPage}${search ? `&search=${encodeURIComponent(search)}` : ''}`).expect(200);
      expect(res.body.message.pagination).toEqual({ page, per_page: perPage, total: all.length });
      expect(res.body.message.contacts.map((c: Listed) => c.id)).toEqual(all.slice((page - 1) * perPage, page * perPage).map((c) => c.id));
    }
    // The dashboard's pages by id: on from the first page by the last id shown, back from the last by the first.
    const ctx = { userId: a.user_id };
    const byId = async (keyset: Omit<Keyset, 'perPage'>) => {
      const result = await h.runtime.services.contacts.listPageAfter(ctx, { ...keyset, perPage }, search || undefined);
      expect(result.total).toBe(all.length);
      return { ids: result.rows.map((c) => c.id), newer: result.newer, older: result.older };
    };
    const slices = Array.from({ length: Math.max(1, pages - 1) }, (_, i) => all.slice(i * perPage, (i + 1) * perPage).map((c) => c.id));
    let page = await byId({});
    for (const [i, ids] of slices.entries()) {
      expect(page).toEqual({ ids, newer: i > 0, older: i < slices.length - 1 });
      if (page.older) page = await byId({ after: ids[ids.length - 1] });
    }
    page = await byId({ last: true });
    for (const [i, ids] of [...slices.entries()].reverse()) {
      expect(page).toEqual({ ids, newer: i > 0, older: i < slices.length - 1 });
      if (page.newer) page = await byId({ before: ids[0] });
    }
    return all.length;
  }

  test('when contacts are added, imported, written directly, moved, deleted and their type deleted then every page and total stays exact', async () => {
    const ana = await h.account();
    const other = await h.account();
    const leads = await addContactType(h, ana, 'Leads');
    const buyers = await addContactType(h, ana, 'Buyers');
    const elsewhere = await addContactType(h, other, 'Elsewhere');
    await addContact(h, other, { contact_type_id: elsewhere, email: 'someone@example.com', country: france });

    const ids: number[] = [];
    for (let i = 0; i < 7; i += 1) ids.push(await addContact(h, ana, { contact_type_id: i % 2 ? buyers : leads, email: `api${i}@example.com`, country: france }));
    const now = new Date().toISOString();
    await h.runtime.db('contacts').insert(
      Array.from({ length: 12 }, (_, i) => ({ user_id: ana.user_id, contact_type_id: leads, email: `row${i}@example.com`, email_key: `row${i}@example.com`, country: france, created_at: now, updated_at: now })),
    );
    const csv = 'first_name,last_name,email,country\n' + Array.from({ length: 6 }, (_, i) => `Imp,Orted,imported${i}@example.com,France`).join('\n') + '\napi0@example.com,,api0@example.com,France\n';
    await h.api(ana).post('/contacts/upload-csv').field('contact_type_id', String(buyers)).attach('file', Buffer.from(csv), 'c.csv').expect(200);

    // 7 + 12 + 6 new; api0 moved from Leads to Buyers by the import.
    expect(await expectPagesMatch(ana, 4)).toBe(25);
    expect(await typeCounts(ana)).toEqual({ Leads: 15, Buyers: 10 });
    expect(await expectPagesMatch(ana, 1000)).toBe(25);

    await h.api(ana).post('/contacts/update').send({ contact_id: ids[2], contact_type_id: buyers, email: 'api2@example.com', country: france }).expect(200);
    await h.api(ana).delete(`/contacts/delete?contact_id=${ids[1]}`).expect(200);
    await h.api(ana).post('/contacts/bulk-delete').type('form').send({ 'strIds[0]': ids[3], 'strIds[1]': ids[4] }).expect(200);
    expect(await typeCounts(ana)).toEqual({ Leads: 13, Buyers: 9 });
    expect(await expectPagesMatch(ana, 3)).toBe(22);

    await h.api(ana).delete(`/contacts-type/delete?contact_type_id=${buyers}`).expect(200);
    expect(await typeCounts(ana)).toEqual({ Leads: 13 });
    expect(await expectPagesMatch(ana, 5)).toBe(13);

    // Many small writes, then the counts still hold (PostgreSQL folds its count rows past a few dozen).
    for (let i = 0; i < 70; i += 1) await h.runtime.db('contacts').insert({ user_id: ana.user_id, contact_type_id: leads, email: `one${i}@example.com`, email_key: `one${i}@example.com`, created_at: now, updated_at: now });
    expect(await typeCounts(ana)).toEqual({ Leads: 83 });
    await h.runtime.db('contacts').where({ user_id: ana.user_id }).where('email', 'like', 'one%').delete();
    expect(await typeCounts(ana)).toEqual({ Leads: 13 });
    expect(await expectPagesMatch(ana, 6)).toBe(13);

    expect(await typeCounts(other)).toEqual({ Elsewhere: 1 });
    expect((await h.api(other).get('/contacts/list?page=1&per_page=10').expect(200)).body.message.pagination).toEqual({ page: 1, per_page: 10, total: 1 });
  });

  test('when searched then an email prefix, a substring, a first, last or full name match ignoring case, paged with their total', async () => {
    const bea = await h.account();
    const other = await h.account();
    const type = await addContactType(h, bea, 'People');
    const otherType = await addContactType(h, other, 'People');
    const people = [
      ['Ada', 'Lovelace', 'ada.lovelace@analytical.org'],
      ['Charles', 'Babbage', 'charles@analytical.org'],
      ['Grace', 'Hopper', 'grace.hopper@navy.mil'],
      ['Alan', 'Turing', 'alan@bletchley.uk'],
      ['Adam', 'Smith', 'adam_smith@economy.org'],
      ['Lova', 'Ada', 'lova@elsewhere.net'],
    ];
    for (const [first, last, email] of people) await addContact(h, bea, { contact_type_id: type, first_name: first, last_name: last, email, country: france });
    await addContact(h, other, { contact_type_id: otherType, first_name: 'Ada', last_name: 'Other', email: 'ada@other.org', country: france });

    const emails = async (search: string) => (await whole(bea, `?search=${encodeURIComponent(search)}`)).map((c) => c.email);
    expect(await emails('ADA.')).toEqual(['ada.lovelace@analytical.org']);
    expect(await emails('analytical')).toEqual(['charles@analytical.org', 'ada.lovelace@analytical.org']);
    expect(await emails('ada')).toEqual(['lova@elsewhere.net', 'adam_smith@economy.org', 'ada.lovelace@analytical.org']);
    expect(await emails('hopper')).toEqual(['grace.hopper@navy.mil']);
    expect(await emails('grace hop')).toEqual(['grace.hopper@navy.mil']);
    expect(await emails('  turing ')).toEqual(['alan@bletchley.uk']);
    expect(await emails('m_s')).toEqual(['adam_smith@economy.org']);
    expect(await emails('a_a')).toEqual([]);
    expect(await emails('%')).toEqual([]);
    expect(await emails('nobody')).toEqual([]);

    expect(await expectPagesMatch(bea, 2, 'a')).toBe(6);
    expect(await expectPagesMatch(bea, 1, 'ada')).toBe(3);
    const none = await h.api(bea).get('/contacts/list?page=1&per_page=10&search=nobody').expect(200);
    expect(none.body.message).toEqual({ contacts: [], pagination: { page: 1, per_page: 10, total: 0 } });
  });

  test('when contacts are renamed, given another email, deleted or re-imported then the search follows, and SQLite finds them through its search index', async () => {
    const cy = await h.account();
    const type = await addContactType(h, cy, 'People');
    const emails = async (search: string) => (await whole(cy, `?search=${encodeURIComponent(search)}`)).map((c) => c.email).sort();
    const ada = await addContact(h, cy, { contact_type_id: type, first_name: 'Ada', last_name: 'Lovelace', email: 'ada@analytical.org', country: france });
    const bob = await addContact(h, cy, { contact_type_id: type, first_name: 'Bob', last_name: 'Byron', email: 'bob@analytical.org', country: france });
    await addContact(h, cy, { contact_type_id: type, first_name: 'Quote"d', last_name: '100%_sure', email: 'odd@example.com', country: france });
    expect(await emails('LOVELACE')).toEqual(['ada@analytical.org']);
    expect(await emails('te"d 100%_s')).toEqual(['odd@example.com']);
    expect(await emails('0%_')).toEqual(['odd@example.com']);
    expect(await emails('0%x')).toEqual([]);
    // Every trigram of the term is in the contact (some in the email, some in the name), the term is not.
    await addContact(h, cy, { contact_type_id: type, first_name: 'Bcd', last_name: 'Quay', email: 'zed@abc.org', country: france });
    expect(await emails('abcd')).toEqual([]);
    expect(await emails('ABC.')).toEqual(['zed@abc.org']);

    await h.api(cy).post('/contacts/update').send({ contact_id: ada, contact_type_id: type, first_name: 'Augusta', last_name: 'King', email: 'augusta@engine.org', country: france }).expect(200);
    expect(await emails('lovelace')).toEqual([]);
    expect(await emails('analytical')).toEqual(['bob@analytical.org']);
    expect(await emails('augusta k')).toEqual(['augusta@engine.org']);
    await h.api(cy).delete(`/contacts/delete?contact_id=${bob}`).expect(200);
    expect(await emails('analytical')).toEqual([]);
    // An import that changes a name and one that adds a contact with a deleted one's email.
    const csv = 'first_name,last_name,email,country\nAugusta,Ada,augusta@engine.org,France\nBobby,Byron,bob@analytical.org,France\n';
    await h.api(cy).post('/contacts/upload-csv').field('contact_type_id', String(type)).attach('file', Buffer.from(csv), 'c.csv').expect(200);
    expect(await emails('augusta ada')).toEqual(['augusta@engine.org']);
    expect(await emails('augusta k')).toEqual([]);
    expect(await emails('bobby byr')).toEqual(['bob@analytical.org']);
    await h.runtime.db('contacts').where({ user_id: cy.user_id }).where('email', 'bob@analytical.org').delete();
    expect(await emails('bobby')).toEqual([]);

    if (isPostgres(h.runtime.db)) return;
    const plan = async (search: string) => {
      const { sql, bindings } = liveContacts(h.runtime.db, { userId: cy.user_id }, search).select('c.id').toSQL();
      return ((await h.runtime.db.raw(`explain query plan ${sql}`, bindings as never[])) as Array<{ detail: string }>).map((r) => r.detail).join('\n');
    };
    const byPrefix = await plan('augusta@');
    expect(byPrefix).toMatch(/SCAN contacts_search VIRTUAL TABLE INDEX/);
    expect(byPrefix).toMatch(/SEARCH c USING (INDEX \w+ \(user_id=\? AND id=\?\)|INTEGER PRIMARY KEY)/);
    expect(byPrefix).not.toMatch(/SCAN c\b/);
    expect(await plan('king')).toMatch(/SCAN contacts_search VIRTUAL TABLE INDEX/);
    // Shorter than a trigram: the index cannot find it, so the account's contacts are read.
    expect(await plan('au')).not.toMatch(/contacts_search/);
  });

  test('when the search index is added to a database that already has contacts then it finds them', async () => {
    const dee = await h.account();
    const type = await addContactType(h, dee, 'People');
    const [, migration] = migrations.find(([name]) => name.endsWith('_sqlite-contact-search'))!;
    await migration.down!(h.runtime.db);
    try {
      await addContact(h, dee, { contact_type_id: type, first_name: 'Grace', last_name: 'Hopper', email: 'grace@navy.mil', country: france });
    } finally {
      await migration.up(h.runtime.db);
    }
    expect((await whole(dee, '?search=HOPPER')).map((c) => c.email)).toEqual(['grace@navy.mil']);
    expect((await whole(dee, '?search=navy.mil')).map((c) => c.email)).toEqual(['grace@navy.mil']);
  });

  test('when a segment is saved then its count, its members and the live count agree', async () => {
    const cid = await h.account();
    const type = await addContactType(h, cid, 'Readers');
    for (let i = 0; i < 9; i += 1) {
      await addContact(h, cid, { contact_type_id: type, first_name: i % 3 === 0 ? 'Match' : 'Other', city: i % 2 ? 'Paris' : 'Lyon', email: `reader${i}@example.com`, country: france });
    }
    const rules = { contact_type_id: type, query_type: 'and', select_field: ['first_name', 'city'], select_operator: ['is', 'is'], value: ['match', 'PARIS'] };
    const ctx = { userId: cid.user_id };
    const counted = await h.runtime.services.segments.count(ctx, { segment_name: 'x', ...rules });
    const saved = await h.api(cid).post('/segment/save').send({ segment_name: 'Paris matches', ...rules }).expect(200);
    expect(saved.body.message).toBe('Saved Successfully');
    const [segment] = (await h.api(cid).get('/segment/list').expect(200)).body.message.segments;
    const members = (await h.api(cid).get(`/segment/email/list?segment_id=${segment.id}`).expect(200)).body.message.contactEmails.map((m: { email: string }) => m.email).sort();
    // Readers 3 (Paris) and 0, 6 (Lyon) are called Match.
    expect(members).toEqual(['reader3@example.com']);
    expect(counted).toBe(1);
    expect(segment.segment_emails_count).toBe(1);
  });
});
