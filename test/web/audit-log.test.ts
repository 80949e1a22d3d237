import request from 'supertest';
import { audienceOf, berlin, singleSendBody } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { metaCsrf, PASSWORD, signIn, useTwoAccounts } from '../support/web';

describe('dashboard: the audit log', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);

  const entries = (userId: number) => h.runtime.db('audit_log').where({ user_id: userId }).orderBy('id', 'desc');

  test('when someone signs in, and someone fails to, then both are recorded in the account with the person and the address', async () => {
    const agent = request.agent(h.runtime.app);
    const page = await agent.get('/login').expect(200);
    await agent.post('/login').type('form').send({ _csrf: metaCsrf(page.text), email: t.alice.email, password: 'not the password' }).expect(401);
    await signIn(h, t.alice);
    const [signedIn, failed] = await entries(t.alice.user_id).whereIn('action', ['user.signed_in', 'user.sign_in_failed']).limit(2);
    expect(signedIn).toMatchObject({ action: 'user.signed_in', actor_type: 'user', actor_id: expect.any(Number), ip: expect.stringMatching(/127\.0\.0\.1/) });
    expect(failed).toMatchObject({ action: 'user.sign_in_failed', actor_type: 'user', actor_id: signedIn.actor_id, summary: expect.stringContaining(t.alice.email) });
    // An address no account has is recorded nowhere (and answers the same).
    const before = await h.runtime.db('audit_log').count({ n: '*' }).first();
    await agent.post('/login').type('form').send({ _csrf: metaCsrf(page.text), email: 'nobody@example.org', password: PASSWORD }).expect(401);
    expect(await h.runtime.db('audit_log').count({ n: '*' }).first()).toEqual(before);
  });

  test('when a send is made in the dashboard and started with a key then its page says who created and who started it', async () => {
    const a = await audienceOf(h, t.alice, await berlin(h));
    const utr = (await h.api(t.alice).post('/single/send/create').send(singleSendBody(a, { single_send_name: 'Drafted', schedule_type: 1, schedule_date: '2099-01-01', schedule_time: '09:00:00' })).expect(200)).body.message.utr;
    const page = await t.web.get(`/single-sends/${utr}`).expect(200);
    expect(page.text).toMatch(/<dt>Created by<\/dt><dd>Original key \(API key\), /);
    expect(page.text).toMatch(/<dt>Scheduled by<\/dt><dd>Original key \(API key\), /);
    await t.web.post(`/single-sends/${utr}/duplicate`).expect(303);
    const copy = await h.runtime.db('single_sends').where({ user_id: t.alice.user_id, single_send_name: 'Copy of Drafted' }).first('utr');
    const copyPage = await t.web.get(`/single-sends/${copy.utr}`).expect(200);
    const owner = await h.runtime.db('team_users').where({ user_id: t.alice.user_id, role: 'owner' }).first('name');
    expect(copyPage.text).toContain(`<dt>Created by</dt><dd>${owner.name}, `);
    expect(copyPage.text).not.toContain('Started by');
  });

  test('when the Audit log page is filtered then it lists only those entries, in plain words, escaped', async () => {
    await h.runtime.services.auditLog.record({ userId: t.alice.user_id, actor: { type: 'api_key', id: 7, name: '<b>Zapier</b>', role: 'editor' }, ip: '192.0.2.1' }, { action: 'contacts.exported', summary: 'Every contact, as CSV' });
    const all = await t.web.get('/audit-log').expect(200);
    expect(all.text).toContain('Exported addresses');
    expect(all.text).toContain('&lt;b&gt;Zapier&lt;/b&gt;');
    expect(all.text).not.toContain('<b>Zapier</b>');
    expect(all.text).toContain('<option value="api_key:7">&lt;b&gt;Zapier&lt;/b&gt;</option>');
    const keyOnly = await t.web.get('/audit-log?actor=api_key:7').expect(200);
    expect(keyOnly.text).toContain('Every contact, as CSV');
    expect(keyOnly.text).not.toContain('<td>Signed in</td>');
    expect(all.text).toContain('<td>Signed in</td>');
    const none = await t.web.get('/audit-log?since=2099-01-01').expect(200);
    expect(none.text).toContain('Nothing matches these filters.');
    // Another account's log shows none of alice's.
    const bob = await signIn(h, t.bob);
    expect((await bob.get('/audit-log').expect(200)).text).not.toContain('Zapier');
  });
});
