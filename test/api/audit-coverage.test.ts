import { addContactType, addGroup, audienceOf, berlin, Place, senderFields, sendingFixtures, singleSendBody } from '../support/fixtures';
import { runAutomations } from '../../src/services/campaigns/enrolment';
import { startDueSingleSends } from '../../src/services/delivery/ledger';
import { workerHooks } from '../../src/workers/event-hooks';
import { TestAccount, useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { addMember, addRoleKey, linkToken } from '../support/team';
import { PASSWORD, signIn, WebClient } from '../support/web';

type Actor = { type: 'user' | 'api_key' | 'system'; id: number | null; name: string };
type Entry = { action: string; actor: Actor; record_type: string | null; record_id: string | null; summary: string };

/**
 * A representative write of every resource, through each kind of actor: each change leaves
 * exactly one entry in the log, with the action it is and the actor who made it.
 */
describe('audit log: every change names its actor', () => {
  const sink = useSmtpSink();
  const h = useHarness({ SMTP_URL: () => sink.url });
  const f = sendingFixtures(h);

  let owner: TestAccount;
  let adminKey: TestAccount;
  let adminKeyId: number;
  let web: WebClient;
  let ownerId: number;
  let ownerName: string;
  let place: Place;
  let typeId: number;

  const ORIGINAL: Actor = { type: 'api_key', id: null, name: 'Original key' };
  const roleKey = (): Actor => ({ type: 'api_key', id: adminKeyId, name: 'admin key' });
  const dashboardUser = (): Actor => ({ type: 'user', id: ownerId, name: ownerName });

  beforeAll(async () => {
    owner = await h.account();
    adminKey = await addRoleKey(h, owner, 'admin');
    adminKeyId = Number((await h.runtime.db('api_keys').where({ public_key: adminKey.public_key }).first('id')).id);
    const me = await h.runtime.db('team_users').where({ user_id: owner.user_id, role: 'owner' }).first('id', 'name');
    ownerId = Number(me.id);
    ownerName = String(me.name);
    web = await signIn(h, owner);
    place = await berlin(h);
    typeId = await addContactType(h, owner, 'Audit coverage');
  });

  const lastId = async (): Promise<number> => Number((await h.runtime.db('audit_log').where({ user_id: owner.user_id }).max({ m: 'id' }).first())?.m ?? 0);

  /** The entries written since `after`, as the API answers them. */
  async function entriesSince(after: number): Promise<Entry[]> {
    const { auditLog } = (await h.api(owner).get('/audit-log?per_page=50').expect(200)).body.message;
    return (auditLog as Array<Entry & { id: number }>).filter((e) => e.id > after);
  }

  /** Runs one change and checks it left exactly one entry: this action, by this actor. */
  async function expectOneEntry(change: () => Promise<unknown>, action: string, actor: Actor): Promise<Entry> {
    const before = await lastId();
    await change();
    const entries = await entriesSince(before);
    expect(entries.map((e) => [e.action, e.actor])).toEqual([[action, actor]]);
    return entries[0];
  }

  const newest = async (table: string, where: Record<string, unknown> = {}): Promise<number> =>
    Number((await h.runtime.db(table).where({ user_id: owner.user_id, ...where }).orderBy('id', 'desc').first('id')).id);

  test('when segments, custom fields and unsubscribe groups change through the API then each change is one entry naming the key', async () => {
    const segment = { segment_name: 'Audit readers', contact_type_id: typeId, select_field: ['email'], select_operator: ['contains'], value: ['@'] };
    await expectOneEntry(() => h.api(owner).post('/segment/save').send(segment).expect(200), 'segment.created', ORIGINAL);
    const segmentId = await newest('segments');
    await expectOneEntry(() => h.api(adminKey).post(`/segment/update?segment_id=${segmentId}`).send({ ...segment, segment_name: 'Renamed' }).expect(200), 'segment.updated', roleKey());
    await expectOneEntry(() => h.api(adminKey).delete(`/segment/delete?segment_id=${segmentId}`).expect(200), 'segment.deleted', roleKey());

    const field = await expectOneEntry(() => h.api(owner).post('/custom-fields/save').send({ field_name: 'shoe_size', field_type: 'number' }).expect(200), 'field.created', ORIGINAL);
    expect(field.summary).toBe('shoe_size (number)');
    await expectOneEntry(async () => h.api(adminKey).delete(`/custom-fields/delete?id=${await newest('fields')}`).expect(200), 'field.deleted', roleKey());

    await expectOneEntry(() => h.api(adminKey).post('/unsubscribes-groups/save').type('form').send({ group_name: 'Weekly', description: 'd', is_display: 1 }).expect(200), 'unsubscribe_group.created', roleKey());
    const groupId = await newest('unsubscribe_groups');
    await expectOneEntry(() => h.api(owner).post(`/unsubscribes-groups/update?id=${groupId}`).type('form').send({ group_name: 'Monthly', description: 'd', is_display: 1 }).expect(200), 'unsubscribe_group.updated', ORIGINAL);
  });

  test('when unsubscribes, suppressions and notification recipients change then each request is one entry, however many addresses it names', async () => {
    await expectOneEntry(() => h.api(owner).post('/global-unsubscribes/save').field('email_address', 'one@example.org, two@example.org').expect(200), 'global_unsubscribe.added', ORIGINAL);
    const unsubscribed = await newest('global_unsubscribes');
    await expectOneEntry(() => h.api(adminKey).delete(`/global-unsubscribes/delete?id=${unsubscribed}`).expect(200), 'global_unsubscribe.removed', roleKey());

    await expectOneEntry(() => h.api(adminKey).post('/suppressions/save').field('email_address', 'gone@example.org, away@example.org').expect(200), 'suppression.added', roleKey());
    await expectOneEntry(async () => h.api(owner).delete(`/suppressions/delete?id=${await newest('suppressed_addresses')}`).expect(200), 'suppression.removed', ORIGINAL);

    await expectOneEntry(() => h.api(owner).post('/notification-recipient/save').field('email_address', 'ops@example.org').field('email_owner', 'Ops').expect(200), 'notification_recipient.created', ORIGINAL);
    await expectOneEntry(async () => h.api(adminKey).delete(`/notification-recipient/delete?id=${await newest('notification_recipients')}`).expect(200), 'notification_recipient.deleted', roleKey());
  });

  test('when senders and automations change through the API then each change is one entry', async () => {
    await expectOneEntry(() => h.api(owner).post('/sender/save').type('form').send(senderFields(place)).expect(200), 'sender.created', ORIGINAL);
    const senderId = await newest('senders');
    await expectOneEntry(() => h.api(adminKey).delete(`/sender/delete?sender_id=${senderId}`).expect(200), 'sender.deleted', roleKey());

    const groupId = await addGroup(h, owner, 'For automations');
    let utr = '';
    const created = await expectOneEntry(async () => {
      utr = (await h.api(adminKey).post('/automations/create').send({ type: 'welcome', automation_name: 'Onboarding', automation_for: `contacts_${typeId}`, unsubscribe_group_id: groupId }).expect(200)).body.message.utr;
    }, 'automation.created', roleKey());
    expect([created.record_type, created.record_id, created.summary]).toEqual(['automation', utr, 'Onboarding']);
    await expectOneEntry(() => h.api(owner).get(`/automations/set-live?utr=${utr}`).expect(200), 'automation.live', ORIGINAL);
    await expectOneEntry(() => h.api(owner).get(`/automations/pause?utr=${utr}`).expect(200), 'automation.paused', ORIGINAL);
    await expectOneEntry(() => h.api(owner).delete(`/automations/delete?utr=${utr}`).expect(200), 'automation.deleted', ORIGINAL);
  });

  test('when a sending domain is added and deleted then each is one entry naming the domain', async () => {
    const added = await expectOneEntry(() => h.api(adminKey).post('/domains/save').send({ domain: 'audit.example' }).expect(200), 'sending_domain.created', roleKey());
    expect(added.summary).toBe('audit.example');
    await expectOneEntry(async () => h.api(owner).delete(`/domains/delete?id=${await newest('sending_domains')}`).expect(200), 'sending_domain.deleted', ORIGINAL);
  });

  test('when the team and its keys change through the API and the dashboard then each change is one entry naming who made it', async () => {
    const invited = await expectOneEntry(() => h.api(owner).post('/users/invite').send({ email: 'casey@team.example', role: 'editor', name: 'Casey' }).expect(200), 'user.invited', ORIGINAL);
    expect(invited.summary).toBe('casey@team.example as editor');
    const caseyId = await newest('team_users', { email: 'casey@team.example' });
    const resent = await expectOneEntry(() => web.post(`/team/${caseyId}/resend`).expect(303), 'user.invitation_resent', dashboardUser());
    expect([resent.record_type, resent.record_id, resent.summary]).toEqual(['user', String(caseyId), 'casey@team.example']);
    const caseyToken = await linkToken(sink, 'casey@team.example', 'invitation');
    await expectOneEntry(
      () => h.runtime.services.teamUsers.acceptInvitation(caseyToken, { password: PASSWORD, password_confirmation: PASSWORD }),
      'user.invitation_accepted',
      { type: 'user', id: caseyId, name: 'Casey' },
    );
    const changed = await expectOneEntry(() => h.api(adminKey).post(`/users/update?id=${caseyId}`).send({ role: 'admin' }).expect(200), 'user.role_changed', roleKey());
    expect(changed.summary).toBe('casey@team.example: editor → admin');
    await expectOneEntry(() => web.post(`/team/${caseyId}/status`, { status: 'disabled' }).expect(303), 'user.disabled', dashboardUser());
    await expectOneEntry(() => web.post(`/team/${caseyId}/delete`).expect(303), 'user.deleted', dashboardUser());

    await expectOneEntry(() => web.post('/api-keys', { name: 'Reports', role: 'analyst' }).expect(200), 'api_key.created', dashboardUser());
    const keyId = await newest('api_keys', { name: 'Reports' });
    await expectOneEntry(() => h.api(owner).delete(`/api-keys/delete?id=${keyId}`).expect(200), 'api_key.deleted', ORIGINAL);
  });

  test('when ownership is handed over and a password is reset by link then each is one entry', async () => {
    const admin = await addMember(h, sink, owner, 'admin', 'dana@team.example');
    await expectOneEntry(() => web.post(`/team/${admin.id}/role`, { role: 'owner' }).expect(303), 'user.ownership_transferred', dashboardUser());
    await h.runtime.services.teamUsers.requestReset('dana@team.example');
    const token = await linkToken(sink, 'dana@team.example', 'reset-password');
    const reset = await expectOneEntry(
      () => h.runtime.services.teamUsers.resetPassword(token, { password: `${PASSWORD}!`, password_confirmation: `${PASSWORD}!` }),
      'user.password_reset',
      { type: 'user', id: admin.id, name: String((await h.runtime.db('team_users').where({ id: admin.id }).first('name')).name) },
    );
    expect(reset.record_id).toBe(String(admin.id));
  });

  test('when a send\'s recipients are downloaded as CSV then the download is one export entry; the JSON list is none', async () => {
    const a = await audienceOf(h, owner, place);
    const utr = (await h.api(owner).post('/single/send/create').send(singleSendBody(a, { schedule_type: 1, schedule_date: '2099-01-01', schedule_time: '09:00:00' })).expect(200)).body.message.utr;
    const exported = await expectOneEntry(() => h.api(adminKey).get(`/single-send/recipients?utr=${utr}&format=csv`).expect(200), 'recipient_report.exported', roleKey());
    expect([exported.record_type, exported.record_id]).toEqual(['single_send', utr]);
    const before = await lastId();
    await h.api(adminKey).get(`/single-send/recipients?utr=${utr}&per_page=10`).expect(200);
    expect(await entriesSince(before)).toEqual([]);
  });

  test('when the worker pauses a due send and a live automation for their unauthenticated domain then each is one entry naming the system', async () => {
    const SYSTEM: Actor = { type: 'system', id: null, name: 'System' };
    // As the worker does with REQUIRE_DOMAIN_AUTH (this instance does not require it, so the send could be saved).
    const requireDomainAuth = { requireDomainAuth: true };
    const senderId = await f.sender(owner.user_id, { from_email: 'news@unauthenticated.example', nickname: 'unauthenticated' });
    const groupId = await addGroup(h, owner, 'Domain pauses');
    const contactTypeId = await addContactType(h, owner, 'Domain pauses');
    const sendId = await f.singleSend(owner.user_id, { senderId, groupId, to: [{ contactType: contactTypeId }] });
    const utr = String((await f.send(sendId)).utr);
    const paused = await expectOneEntry(() => startDueSingleSends(h.runtime.db, new Date(), workerHooks(h.runtime.services), requireDomainAuth), 'single_send.paused', SYSTEM);
    expect([paused.record_type, paused.record_id]).toEqual(['single_send', utr]);

    const automation = await f.automation(owner.user_id, { type: 'custom', contactType: contactTypeId, groupId, status: 1 });
    await f.schedule(owner.user_id, automation, { senderId, subject: 'Step one', waitingPeriod: 0, waitingType: 'instantly' });
    const stopped = await expectOneEntry(() => runAutomations(h.runtime.db, new Date(), workerHooks(h.runtime.services), requireDomainAuth), 'automation.paused', SYSTEM);
    expect([stopped.record_type, stopped.record_id]).toEqual(['automation', String((await f.automationRecord(automation)).utr)]);
  });

  test('when a change is refused then it leaves no entry', async () => {
    const before = await lastId();
    await h.api(owner).post('/custom-fields/save').send({ field_name: 'x'.repeat(65), field_type: 'text' }).expect(422);
    await h.api(owner).delete('/segment/delete?segment_id=999999').expect(404);
    await h.api(owner).delete('/api-keys/delete?id=999999').expect(404);
    expect(await entriesSince(before)).toEqual([]);
  });
});
