import { useProviderWorld } from '../support/providers';
import { until } from '../support/wait';
import { signIn } from '../support/web';

/**
 * Per-provider figures of a send: recipient domains classified by their MX hosts through a real
 * DNS server, a real SMTP sink that defers and refuses some recipients.
 */
describe('figures per mailbox provider', () => {
  // `deferred@` is deferred as Gmail defers a sender it throttles, once; `gone@` does not exist.
  const deferredOnce = new Set<string>();
  const { h, f, alice, clock, run } = useProviderWorld({
    // nomx.test: no record at all (NXDOMAIN).
    mx: { 'gmail-like.test': ['5 gmail-smtp-in.l.google.com', '10 alt1.gmail-smtp-in.l.google.com'], 'plain.test': ['10 mx.plain.test'] },
    sink: {
      onRecipient: (address) => {
        if (address.startsWith('gone@')) return { code: 550, message: '5.1.1 The email account that you tried to reach does not exist' };
        if (address.startsWith('deferred@') && !deferredOnce.has(address)) {
          deferredOnce.add(address);
          return { code: 421, message: '4.7.28 Gmail has detected an unusual rate of unsolicited mail originating from your SPF domain' };
        }
        return undefined;
      },
    },
    env: { SEND_RETRY_SECONDS: '60' },
  });

  const figures = async (path: string) => {
    const res = await h.api(alice).get(path);
    if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
    return res.body.message.providers as Array<Record<string, unknown>>;
  };

  test('when a send went to Gmail, Outlook and other domains then its figures are grouped by each domain\'s provider, with the deferral codes', async () => {
    const { sender, group, type } = await f.basics(alice, 'Everyone');
    const people = ['a@gmail-like.test', 'deferred@gmail-like.test', 'b@outlook-like.test', 'gone@outlook-like.test', 'c@plain.test', 'd@nomx.test'];
    for (const email of people) await f.contact(alice.user_id, type, email);
    const send = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }], dueAt: clock.now() });
    const { utr } = await f.send(send);

    await run();
    // Classified in the background when the send started: one lookup per domain.
    await until(async () => Number((await h.runtime.db('recipient_domains').count({ n: '*' }).first())?.n) === 4, 10_000, 'the four domains classified');
    const classes = await h.runtime.db('recipient_domains').orderBy('domain').select('domain', 'provider', 'mx');
    expect(classes).toEqual([
      { domain: 'gmail-like.test', provider: 'google', mx: 'gmail-smtp-in.l.google.com,alt1.gmail-smtp-in.l.google.com' },
      { domain: 'nomx.test', provider: 'other', mx: '' },
      { domain: 'outlook-like.test', provider: 'microsoft', mx: 'outlook-like-test.mail.protection.outlook.com' },
      { domain: 'plain.test', provider: 'other', mx: 'mx.plain.test' },
    ]);

    // Gmail's wait after a throttling deferral: SEND_RETRY_SECONDS and up to a quarter more.
    clock.advance(80_000);
    await run();
    const deferral = { code: '4.7.28', text: expect.stringContaining('unusual rate of unsolicited mail'), count: 1 };
    expect(await figures(`/single-send/providers?utr=${utr}`)).toEqual([
      { provider: 'google', sent: 2, delivered: 2, deferred: 1, bounced: 0, complained: 0, opened: 0, clicked: 0, top_deferrals: [deferral] },
      { provider: 'microsoft', sent: 2, delivered: 1, deferred: 0, bounced: 1, complained: 0, opened: 0, clicked: 0, top_deferrals: [] },
      { provider: 'other', sent: 2, delivered: 2, deferred: 0, bounced: 0, complained: 0, opened: 0, clicked: 0, top_deferrals: [] },
    ]);

    // A domain is read at its provider as known now: plain.test moving to Google moves its figures.
    await h.runtime.db('recipient_domains').where({ domain: 'plain.test' }).update({ provider: 'google' });
    const moved = await figures(`/single-send/providers?utr=${utr}`);
    expect(moved.map((p) => [p.provider, p.sent])).toEqual([['google', 3], ['microsoft', 2], ['other', 1]]);

    // The sending domain's days: the same messages, sent from acme.test.
    const domain = (await h.api(alice).post('/domains/save').send({ domain: 'acme.test' }).expect(200)).body.message.domain;
    const days = await figures(`/domains/providers?id=${domain.id}&days=7`);
    expect(days.map((d) => [d.provider, d.sent, d.delivered, d.deferred])).toEqual([['google', 3, 3, 1], ['microsoft', 2, 1, 0], ['other', 1, 1, 0]]);
    expect(days[0].day).toBe(clock.now().toISOString().slice(0, 10));

    // The domain's page: the same figures as a table and a chart, in plain words.
    const web = await signIn(h, alice);
    const page = (await web.agent.get(`/domains/${domain.id}`).expect(200)).text;
    expect(page).toContain('The last 7 days by mailbox provider');
    expect(page).toMatch(/<th scope="row">Gmail<\/th>\s*<td>3<\/td>\s*<td>3<\/td>\s*<td>1<\/td>/);
    expect(page).toContain('Delivered per provider');
  });

  test('when the figures are asked for with a wrong utr, another account\'s send or days out of range then they answer 404 and 422', async () => {
    const bob = await h.account();
    const { sender, group, type } = await f.basics(alice, 'Someone');
    await f.contact(alice.user_id, type, 'a@plain.test');
    const { utr } = await f.send(await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] }));
    expect((await h.api(bob).get(`/single-send/providers?utr=${utr}`).expect(404)).body).toEqual({ status: 'failed', errors: 'Record Not Found' });
    expect((await h.api(alice).get('/automations/providers?utr=00000000-0000-4000-8000-000000000000').expect(404)).body).toEqual({ status: 'failed', errors: 'Record Not Found' });
    expect((await h.api(alice).get('/single-send/providers').expect(422)).body.errors).toHaveProperty('utr');
    const domain = (await h.api(alice).post('/domains/save').send({ domain: 'other-acme.test' }).expect(200)).body.message.domain;
    expect((await h.api(alice).get(`/domains/providers?id=${domain.id}&days=91`).expect(422)).body).toEqual({ status: 'failed', errors: { days: ['The days must be between 1 and 90.'] } });
    expect((await h.api(alice).get(`/domains/providers?id=${domain.id}&days=0`).expect(422)).body).toEqual({ status: 'failed', errors: { days: ['The days must be at least 1.'] } });
    expect((await h.api(bob).get(`/domains/providers?id=${domain.id}`).expect(404)).body).toEqual({ status: 'failed', errors: 'Record Not Found' });
    expect(await figures(`/domains/providers?id=${domain.id}`)).toEqual([]);
  });
});
