import { addContact, addContactType, addCustomField, countryId } from '../support/fixtures';
import { TestAccount, useHarness } from '../support/harness';

describe('privacy export and erasure (extension)', () => {
  const h = useHarness();

  /** A contact with a custom field, a segment entry, a group, a global unsubscribe and two ledger rows, one opened. */
  async function personWithHistory(account: TestAccount, email: string) {
    await addCustomField(h, account, 'plan', 'text');
    const type = await addContactType(h, account, 'People');
    const contactId = await addContact(h, account, { contact_type_id: type, email, first_name: 'Erin', country: await countryId(h, 'FR'), custom_field: { plan: 'pro' } });
    await h.api(account).post('/segment/save').send({ segment_name: 'Pros', contact_type_id: type, select_field: ['plan'], select_operator: ['is'], value: ['pro'] }).expect(200);
    await h.api(account).post('/unsubscribes-groups/save').send({ group_name: 'News', description: 'Weekly', is_display: 1 }).expect(200);
    const group = await h.runtime.db('unsubscribe_groups').where({ user_id: account.user_id }).first('id');
    await h.api(account).post('/unsubscribes-groups/manually-add').send({ unsubscribe_groups_id: group.id, email_address: email }).expect(200);
    const now = new Date().toISOString();
    const ledger = (state: number, opened: string | null) => ({
      user_id: account.user_id, kind: 1, contact_id: contactId, email, email_key: email.toLowerCase(), state, sent_at: opened ? now : null, opened_at: opened, created_at: now, updated_at: now,
    });
    await h.runtime.db('send_messages').insert([ledger(2, now), ledger(2, null)]);
    return { type, contactId, group: Number(group.id) };
  }

  test('when everything about an address is exported then the JSON lists its contact, fields, segments, groups, messages and opens', async () => {
    const account = await h.account();
    const { contactId, group } = await personWithHistory(account, 'Erin@Example.com');
    const res = await h.api(account).get('/contacts/privacy-export?email=erin@example.com').expect(200);
    const { privacy } = res.body.message;
    expect(res.body.status).toBe('success');
    expect(privacy.email).toBe('erin@example.com');
    expect(privacy.contacts).toHaveLength(1);
    expect(privacy.contacts[0]).toMatchObject({ id: contactId, email: 'Erin@Example.com', first_name: 'Erin', custom_field: { plan: { field_name: 'plan', field_value: 'pro' } } });
    expect(privacy.segments).toEqual([expect.objectContaining({ segment_name: 'Pros', source: 'rule' })]);
    expect(privacy.unsubscribe_groups).toEqual([expect.objectContaining({ unsubscribe_groups_id: group, group_name: 'News' })]);
    expect(privacy.messages).toHaveLength(2);
    expect(privacy.messages[0]).toMatchObject({ state: 'sent' });
    expect(privacy.opens).toHaveLength(1);
    expect(privacy.global_unsubscribe).toBeNull();

    const stranger = await h.account();
    const none = (await h.api(stranger).get('/contacts/privacy-export?email=erin@example.com').expect(200)).body.message.privacy;
    expect(none).toMatchObject({ contacts: [], segments: [], messages: [], opens: [] });
  });

  test('when an address is erased then its contact and segment rows are gone and the ledger keeps its counts under a hash', async () => {
    const account = await h.account();
    await personWithHistory(account, 'gone@example.com');
    const before = await h.runtime.db('send_messages').where({ user_id: account.user_id }).count({ n: '*' }).first();
    const res = await h.api(account).post('/contacts/erase').send({ email: 'GONE@example.com' }).expect(200);
    expect(res.body).toEqual({
      status: 'success',
      message: 'Erased Successfully',
      erased: { contacts: 1, segment_recipients: 1, messages: 2, automation_enrolments: 0, skipped_import_rows: 0, webhook_deliveries: 0, signups: 0 },
    });
    expect(await h.runtime.db('contacts').where({ user_id: account.user_id, email_key: 'gone@example.com' }).first()).toBeUndefined();
    expect(await h.runtime.db('segment_recipients').where({ user_id: account.user_id, email_key: 'gone@example.com' }).first()).toBeUndefined();
    const after = await h.runtime.db('send_messages').where({ user_id: account.user_id }).select('email', 'email_key', 'opened_at');
    expect(after).toHaveLength(Number(before?.n));
    expect(after.filter((m: { opened_at: unknown }) => m.opened_at)).toHaveLength(1);
    for (const m of after) expect(m.email).toMatch(/^erased-[a-z0-9_-]{32}@erased\.invalid$/);
    const exported = (await h.api(account).get('/contacts/privacy-export?email=gone@example.com').expect(200)).body.message.privacy;
    expect(exported).toMatchObject({ contacts: [], segments: [], messages: [], opens: [] });
    // The group unsubscribe is kept: the address is not mailed again.
    expect(exported.unsubscribe_groups).toHaveLength(1);
  });

  test('when the email is missing or invalid then 422 names it', async () => {
    const account = await h.account();
    const missing = await h.api(account).post('/contacts/erase').send({}).expect(422);
    expect(missing.body).toEqual({ status: 'failed', errors: { email: ['The email field is required.'] } });
    const invalid = await h.api(account).get('/contacts/privacy-export?email=nope').expect(422);
    expect(invalid.body).toEqual({ status: 'failed', errors: { email: ['The email must be a valid email address.'] } });
  });
});

describe('an erased address that comes back in an import', () => {
  const h = useHarness();

  test('when a file brings an erased address back then its group unsubscribe and global unsubscribe hold for it again, and nobody else gains one', async () => {
    const account = await h.account();
    const type = await addContactType(h, account, 'Imported');
    await h.api(account).post('/unsubscribes-groups/save').send({ group_name: 'News', description: 'Weekly', is_display: 1 }).expect(200);
    const group = await h.runtime.db('unsubscribe_groups').where({ user_id: account.user_id }).first('id');
    await h.api(account).post('/unsubscribes-groups/manually-add').send({ unsubscribe_groups_id: group.id, email_address: 'back@example.com' }).expect(200);
    await h.api(account).post('/global-unsubscribes/save').send({ email_address: 'back@example.com' }).expect(200);
    await h.api(account).post('/contacts/erase').send({ email: 'back@example.com' }).expect(200);
    const listed = async () => (await h.api(account).get('/global-unsubscribes').expect(200)).body.message.unSubscribers.map((u: { email_address: string }) => u.email_address);
    expect(await listed()).not.toContain('back@example.com');

    const csv = ['email,first_name', 'new@example.com,New', 'Back@Example.com,Back'].join('\n');
    const res = await h.api(account).post('/contacts/upload-csv').field('contact_type_id', String(type)).attach('file', Buffer.from(csv), 'contacts.csv').expect(200);
    expect(res.body.status).toBe('success');
    expect(await listed()).toEqual(['back@example.com']);
    const privacy = (await h.api(account).get('/contacts/privacy-export?email=back@example.com').expect(200)).body.message.privacy;
    expect(privacy).toMatchObject({ global_unsubscribe: { created_at: expect.any(String) }, unsubscribe_groups: [{ unsubscribe_groups_id: Number(group.id) }] });
  });
});
