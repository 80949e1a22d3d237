import { nowValue } from '../../src/db/dialect';
import { suppressAddress } from '../../src/services/delivery/ledger';
import { expectDeleteIdRules, NOT_FOUND } from '../support/expectations';
import { TIMESTAMP, useHarness, TestAccount } from '../support/harness';

describe('suppressions (extension)', () => {
  const h = useHarness();
  const [alice, bob] = h.accounts(2);

  const suppress = (account: TestAccount, email: string, category: 'hard_bounce' | 'soft_bounce' | 'complaint', diagnostic: string, source: string) =>
    suppressAddress(h.runtime.db, { userId: account.user_id, email, emailKey: email.toLowerCase(), category, diagnostic, source, now: nowValue() });

  test('when addresses bounced or complained then the list shows each with its reason, diagnostic and source, newest first, and only to its account', async () => {
    await suppress(alice, 'Gone@Example.org', 'hard_bounce', 'smtp; 550 5.1.1 user unknown', 'dsn');
    await suppress(alice, 'angry@example.org', 'complaint', 'abuse', 'arf');
    await suppress(bob, 'bobs@example.org', 'soft_bounce', 'mailbox full', 'sendgrid');

    const res = await h.api(alice).get('/suppressions').expect(200);
    expect(res.body).toEqual({
      status: 'success',
      message: {
        suppressions: [
          { id: expect.any(Number), user_id: alice.user_id, email_address: 'angry@example.org', reason: 'complaint', bounce_class: null, diagnostic: 'abuse', source: 'arf', created_at: expect.stringMatching(TIMESTAMP) },
          { id: expect.any(Number), user_id: alice.user_id, email_address: 'Gone@Example.org', reason: 'hard_bounce', bounce_class: 'hard', diagnostic: 'smtp; 550 5.1.1 user unknown', source: 'dsn', created_at: expect.stringMatching(TIMESTAMP) },
        ],
      },
    });
  });

  test('when the list is filtered by bounce class then only the addresses suppressed for that kind of refusal come back', async () => {
    const erin = await h.account();
    await suppress(erin, 'gone@example.org', 'hard_bounce', 'smtp; 550 5.1.1 user unknown', 'dsn');
    await suppress(erin, 'full@example.org', 'soft_bounce', '452 4.2.2 The email account that you tried to reach is over quota', 'smtp');
    await suppress(erin, 'angry@example.org', 'complaint', 'abuse', 'arf');
    const listed = async (klass: string) => (await h.api(erin).get(`/suppressions?bounce_class=${klass}`).expect(200)).body.message.suppressions.map((s: { email_address: string }) => s.email_address);
    expect(await listed('hard')).toEqual(['gone@example.org']);
    expect(await listed('mailbox_full')).toEqual(['full@example.org']);
    expect(await listed('policy')).toEqual([]);
    expect((await h.api(erin).get('/suppressions?bounce_class=firm').expect(422)).body).toEqual({ status: 'failed', errors: { bounce_class: ['The selected bounce class is invalid.'] } });
  });

  test('when the list is searched and paged then only matching addresses of that page come back with the pagination', async () => {
    const carol = await h.account();
    for (const email of ['one@match.test', 'two@match.test', 'three@other.test']) await suppress(carol, email, 'hard_bounce', '550', 'dsn');
    const res = await h.api(carol).get('/suppressions?search=MATCH&page=1&per_page=1').expect(200);
    expect(res.body.message.suppressions.map((s: { email_address: string }) => s.email_address)).toEqual(['two@match.test']);
    expect(res.body.message.pagination).toEqual({ page: 1, per_page: 1, total: 2 });
    const none = await h.api(carol).get('/suppressions?search=100%25').expect(200);
    expect(none.body.message.suppressions).toEqual([]);
    const bad = await h.api(carol).get('/suppressions?search[a]=1').expect(422);
    expect(bad.body).toEqual({ status: 'failed', errors: { search: ['The search must be a string.'] } });
  });

  test('when an address is reinstated then it leaves the list; another account cannot reinstate it', async () => {
    const dave = await h.account();
    await suppress(dave, 'back@example.org', 'hard_bounce', '550', 'dsn');
    const [record] = (await h.api(dave).get('/suppressions').expect(200)).body.message.suppressions;
    expect((await h.api(alice).delete(`/suppressions/delete?id=${record.id}`).expect(404)).body).toEqual(NOT_FOUND);
    const res = await h.api(dave).delete(`/suppressions/delete?id=${record.id}`).expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Deleted Successfully' });
    expect((await h.api(dave).get('/suppressions').expect(200)).body.message.suppressions).toEqual([]);
    expect((await h.api(dave).delete(`/suppressions/delete?id=${record.id}`).expect(404)).body).toEqual(NOT_FOUND);
    await expectDeleteIdRules(h.api(dave), '/suppressions/delete');
  });

  test('when addresses are added by hand then they are listed as manual, and bad addresses are refused', async () => {
    const erin = await h.account();
    const res = await h.api(erin).post('/suppressions/save').field('email_address', 'hand@example.org, HAND@example.org').expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Added Successfully' });
    const list = (await h.api(erin).get('/suppressions').expect(200)).body.message.suppressions;
    expect(list).toEqual([expect.objectContaining({ email_address: 'hand@example.org', reason: 'manual', source: 'api' })]);
    const bad = await h.api(erin).post('/suppressions/save').field('email_address', 'not-an-address').expect(422);
    expect(bad.body.status).toBe('failed');
    expect(Object.keys(bad.body.errors)).toEqual(['email_address']);
  });

  test('when no keys are given then the list is refused', async () => {
    const res = await h.api().get('/suppressions').expect(401);
    expect(res.body.status).toBe('failed');
  });
});
