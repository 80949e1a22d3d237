import { addContact, addContactType, audienceOf, Audience, berlin, countryId, singleSendBody } from '../support/fixtures';
import { TIMESTAMP, useHarness } from '../support/harness';
import { createRetentionService } from '../../src/services/maintenance/retention';
import { failed } from '../support/expectations';

const ORIGINAL_KEY = { type: 'api_key', id: null, name: 'Original key' };

describe('audit log: GET /audit-log', () => {
  const h = useHarness();
  const [alice, bob] = h.accounts(2);
  let a: Audience;

  beforeAll(async () => {
    a = await audienceOf(h, alice, await berlin(h));
  });

  const log = async (query = '', account = alice) => (await h.api(account).get(`/audit-log${query}`).expect(200)).body.message;

  test('when a single send is created with the account\'s keys then the log says the key created and started it, from the client\'s address', async () => {
    const utr = (await h.api(alice).post('/single/send/create').send(singleSendBody(a, { single_send_name: 'Winter sale' })).expect(200)).body.message.utr;
    const { auditLog } = await log('?action=single_send');
    const entries = auditLog.filter((e: { record_id: string }) => e.record_id === utr);
    expect(entries).toEqual([
      { id: expect.any(Number), user_id: alice.user_id, actor: ORIGINAL_KEY, action: 'single_send.started', record_type: 'single_send', record_id: utr, summary: 'Winter sale, sent at once', ip: expect.stringMatching(/127\.0\.0\.1/), created_at: expect.stringMatching(TIMESTAMP) },
      { id: expect.any(Number), user_id: alice.user_id, actor: ORIGINAL_KEY, action: 'single_send.created', record_type: 'single_send', record_id: utr, summary: 'Winter sale', ip: expect.stringMatching(/127\.0\.0\.1/), created_at: expect.stringMatching(TIMESTAMP) },
    ]);
    // Another account sees none of it.
    expect((await log('', bob)).auditLog.some((e: { record_id: string }) => e.record_id === utr)).toBe(false);
  });

  test('when a scheduled send is paused, resumed and cancelled then each is an entry, newest first', async () => {
    const utr = (await h.api(alice).post('/single/send/create').send(singleSendBody(a, { schedule_type: 1, schedule_date: '2099-01-01', schedule_time: '09:00:00' })).expect(200)).body.message.utr;
    for (const control of ['pause', 'resume', 'cancel']) await h.api(alice).get(`/single/send/${control}?utr=${utr}`).expect(200);
    const { auditLog } = await log('?action=single_send');
    expect(auditLog.filter((e: { record_id: string }) => e.record_id === utr).map((e: { action: string }) => e.action)).toEqual([
      'single_send.cancelled', 'single_send.resumed', 'single_send.paused', 'single_send.scheduled', 'single_send.created',
    ]);
  });

  test('when a change is refused then nothing is recorded', async () => {
    const utr = (await h.api(alice).post('/single/send/create').send(singleSendBody(a)).expect(200)).body.message.utr;
    await h.runtime.db('single_sends').where({ utr }).update({ status: 3 });
    const before = (await log()).pagination.total;
    await h.api(alice).delete(`/single/send/delete?utr=${utr}`).expect(409);
    await h.api(alice).get(`/single/send/pause?utr=${utr}`).expect(409);
    expect((await log()).pagination.total).toBe(before);
  });

  test('when contacts are added, deleted and exported then the log names each contact and the export', async () => {
    const type = await addContactType(h, alice, 'Audit readers');
    const id = await addContact(h, alice, { email: 'ann@example.org', contact_type_id: type, country: await countryId(h, 'FR') });
    await h.api(alice).delete(`/contacts/delete?contact_id=${id}`).expect(200);
    await h.api(alice).get(`/contacts/export?contact_type_id=${type}`).expect(200);
    const { auditLog } = await log('?action=contact');
    expect(auditLog.slice(0, 2).map((e: Record<string, unknown>) => [e.action, e.record_id, e.summary])).toEqual([
      ['contact.deleted', String(id), 'ann@example.org'],
      ['contact.created', String(id), 'ann@example.org'],
    ]);
    const exported = (await log('?action=contacts.exported')).auditLog;
    expect(exported[0]).toMatchObject({ action: 'contacts.exported', record_type: 'contact_type', record_id: String(type), actor: ORIGINAL_KEY });
  });

  test('when a contact type is added, renamed and deleted then each is an entry; a refused name is none', async () => {
    await h.api(alice).post('/contacts-type/add').send({ name: 'Partners' }).expect(200);
    const id = (await h.runtime.db('contact_types').where({ user_id: alice.user_id, name: 'Partners' }).first('id')).id;
    await h.api(alice).post('/contacts-type/add').send({ name: 'partners' }).expect(422);
    await h.api(alice).post('/contacts-type/update').send({ id, name: 'Resellers' }).expect(200);
    await h.api(alice).delete(`/contacts-type/delete?contact_type_id=${id}`).expect(200);
    const { auditLog } = await log('?action=contact_type');
    expect(auditLog.filter((e: { record_id: string }) => e.record_id === String(id)).map((e: Record<string, unknown>) => [e.action, e.record_id, e.summary])).toEqual([
      ['contact_type.deleted', String(id), ''],
      ['contact_type.updated', String(id), 'Resellers'],
      ['contact_type.created', String(id), 'Partners'],
    ]);
  });

  test('when the log is filtered by actor, action and since then only matching entries come, one page at a time', async () => {
    const all = await log('?per_page=2&page=1');
    expect(all.auditLog).toHaveLength(2);
    expect(all.pagination).toEqual({ page: 1, per_page: 2, total: expect.any(Number) });
    expect(all.pagination.total).toBeGreaterThan(4);
    // The fixtures write contact types through the service itself, which is the system.
    const system = await log('?actor=system');
    expect(system.auditLog.length).toBeGreaterThan(0);
    expect(system.auditLog.every((e: { actor: { type: string } }) => e.actor.type === 'system')).toBe(true);
    const keys = await log('?actor=api_key');
    expect(keys.auditLog.every((e: { actor: { type: string } }) => e.actor.type === 'api_key')).toBe(true);
    expect(keys.pagination.total + system.pagination.total).toBe(all.pagination.total);
    expect((await log('?actor=user:999999')).auditLog).toEqual([]);
    expect((await log('?since=2099-01-01')).auditLog).toEqual([]);
    const today = new Date().toISOString().slice(0, 10);
    expect((await log(`?since=${today}`)).pagination.total).toBe(all.pagination.total);
    const started = (await log('?action=single_send.started')).auditLog;
    expect(started.length).toBeGreaterThan(0);
    expect(started.every((e: { action: string }) => e.action === 'single_send.started')).toBe(true);
  });

  test('when a filter is not one the log knows then it is a 422 naming it', async () => {
    const res = await h.api(alice).get('/audit-log?actor=robot&action=single_send.exploded&since=yesterday').expect(422);
    expect(res.body).toEqual(failed({
      actor: ['The selected actor is invalid.'],
      action: ['The selected action is invalid.'],
      since: ['The since must be a date such as 2026-11-27 or a date and time such as 2026-11-27T09:30:00Z.'],
    }));
  });

  test('when entries are older than AUDIT_RETENTION_DAYS then the maintenance job deletes them and keeps the rest', async () => {
    const carol = await h.account();
    const type = await addContactType(h, carol, 'Old');
    await h.runtime.db('audit_log').insert({
      user_id: carol.user_id, actor_type: 'system', actor_id: null, actor_name: 'System', action: 'contact.deleted', summary: 'long ago',
      created_at: new Date(Date.now() - 400 * 24 * 3600_000).toISOString(),
    });
    await addContact(h, carol, { email: 'new@example.org', contact_type_id: type, country: await countryId(h, 'FR') });
    const retention = createRetentionService({ db: h.runtime.db, config: { ...h.runtime.config, auditRetentionDays: 365 }, logger: h.runtime.logger });
    const counts = await retention.prune();
    expect(counts.auditEntries).toBeGreaterThanOrEqual(1);
    const left = (await log('', carol)).auditLog.map((e: { summary: string }) => e.summary);
    expect(left).toEqual(['new@example.org', 'Old']);
    const keepAll = createRetentionService({ db: h.runtime.db, config: { ...h.runtime.config, auditRetentionDays: 0 }, logger: h.runtime.logger });
    await h.runtime.db('audit_log').where({ user_id: carol.user_id }).update({ created_at: new Date(Date.now() - 4000 * 24 * 3600_000).toISOString() });
    expect((await keepAll.prune()).auditEntries).toBe(0);
    expect((await log('', carol)).auditLog).toHaveLength(2);
  });
});
