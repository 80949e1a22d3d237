import { insertId, nowValue } from '../../src/db/dialect';
import { FEEDBACK_EVENT, MESSAGE_STATE } from '../../src/lib/constants';
import { useProviderWorld } from '../support/providers';
import { signIn } from '../support/web';

/**
 * The complaint and bounce guard: complaints from Gmail's users past the line pause the sending
 * domain's mail to Gmail only; Outlook's recipients keep getting it; an admin resumes it.
 */
describe('the complaint and bounce guard per sending domain and provider', () => {
  // Small lines, so a handful of messages can cross them.
  const { sink, h, f, alice, clock, run } = useProviderWorld({ env: { GUARD_MIN_DELIVERED: '3', COMPLAINT_PAUSE_RATE: '10%' } });

  beforeAll(async () => {
    await insertId(h.runtime.db, 'notification_recipients', {
      user_id: alice.user_id, email_address: 'boss@example.org', email_key: 'boss@example.org', email_owner: 'Boss', created_at: nowValue(), updated_at: nowValue(),
    });
  });
  async function sendTo(name: string, emails: string[]): Promise<number> {
    const { sender, group, type } = await f.basics(alice, name);
    for (const email of emails) await f.contact(alice.user_id, type, email);
    return f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }], dueAt: clock.now() });
  }
  const notices = () => sink.messages.filter((m) => m.to.includes('boss@example.org') && /is paused/.test(String(m.parsed.subject)));

  test('when Gmail\'s complaints reach the line then mail from the domain to Gmail pauses, once, and resumes when an admin says so', async () => {
    const domain = (await h.api(alice).post('/domains/save').send({ domain: 'acme.test' }).expect(200)).body.message.domain;
    const first = await sendTo('First', ['g1@gmail-like.test', 'g2@gmail-like.test', 'g3@gmail-like.test', 'g4@gmail-like.test', 'o1@outlook-like.test', 'o2@outlook-like.test', 'o3@outlook-like.test']);
    await run();
    const complained = (await f.ledger(first)).find((r) => r.email === 'g1@gmail-like.test')!;
    await h.runtime.services.feedback.record(Number(complained.id), { event: FEEDBACK_EVENT.complaint, diagnostic: 'abuse report', source: 'test' });

    const second = await sendTo('Second', ['g5@gmail-like.test', 'g6@gmail-like.test', 'o4@outlook-like.test', 'o5@outlook-like.test']);
    await run();
    const rows = await f.ledger(second);
    const stateOf = (email: string) => rows.find((r) => r.email === email)!.state;
    // Outlook's recipients got it; Gmail's stay queued, not attempted.
    expect(['o4@outlook-like.test', 'o5@outlook-like.test'].map(stateOf)).toEqual([MESSAGE_STATE.sent, MESSAGE_STATE.sent]);
    expect(['g5@gmail-like.test', 'g6@gmail-like.test'].map(stateOf)).toEqual([MESSAGE_STATE.queued, MESSAGE_STATE.queued]);
    expect(rows.filter((r) => String(r.email).startsWith('g')).map((r) => Number(r.attempts))).toEqual([0, 0]);

    const pauses = await h.runtime.db('provider_pauses').where({ sending_domain_id: domain.id });
    expect(pauses).toHaveLength(1);
    expect(pauses[0]).toMatchObject({ provider: 'google', paused_reason: expect.stringContaining('Spam complaints from Gmail reached 25% of the 4 delivered from acme.test') });
    expect(notices().map((m) => m.parsed.subject)).toEqual(['Mail from acme.test to Gmail is paused']);
    const log = (await h.api(alice).get('/audit-log?actor=system&action=sending_domain.provider_paused').expect(200)).body.message.auditLog;
    expect(log).toMatchObject([{ actor: { type: 'system' }, summary: 'acme.test: mail to Gmail paused by the complaint and bounce guard' }]);

    // Later looks find it paused already: no second mail.
    clock.advance(15 * 60_000);
    await run();
    expect(notices()).toHaveLength(1);
    expect((await f.ledger(second)).filter((r) => r.state === MESSAGE_STATE.queued)).toHaveLength(2);

    // The domain's page says why and offers the resume to an admin.
    const web = await signIn(h, alice);
    const page = (await web.get(`/domains/${domain.id}`).expect(200)).text;
    expect(page).toContain('Mail to Gmail');
    expect(page).toContain('Resume mail to Gmail');
    expect((await web.post(`/domains/${domain.id}/resume`, { provider: 'yahoo' })).status).toBe(404);
    await web.post(`/domains/${domain.id}/resume`, { provider: 'google' }).expect(303);
    expect(await h.runtime.services.providerGuard.ofDomain({ userId: alice.user_id }, domain.id)).toEqual([]);
    const resumed = (await h.api(alice).get('/audit-log?action=sending_domain.provider_resumed').expect(200)).body.message.auditLog;
    expect(resumed).toMatchObject([{ actor: { type: 'user' }, summary: 'acme.test: mail to Gmail resumed' }]);

    // The queued mail goes when it is next looked at; the complaint that paused it does not pause it again, and nobody is told twice.
    clock.advance(10 * 60_000);
    await run();
    expect((await f.ledger(second)).map((r) => r.state)).toEqual(rows.map(() => MESSAGE_STATE.sent));
    expect(notices()).toHaveLength(1);
    expect((await web.get(`/domains/${domain.id}`).expect(200)).text).not.toContain('Resume mail to Gmail');
  });
});
