import request from 'supertest';
import { useHarness, TestAccount } from '../support/harness';
import { addContactType, manualClock, sendingFixtures, singleSendBody, testWorker } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';
import { failed } from '../support/expectations';

/** A mail client a person reads with, and the bare agent of Apple's privacy proxy (an automated open). */
const PERSON = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 (KHTML, like Gecko) Thunderbird/128.0';
const MACHINE = 'Mozilla/5.0';

const VARIANTS = [
  { subject: 'Plain subject', from_name: 'Acme Plain' },
  { subject: 'Curious subject, ((first_name))?', template_html: '<html><body><p>Variant B for ((first_name))</p><p><a href="https://acme.test/b">B offer</a></p></body></html>' },
];

describe('A/B tests of a single send: a test share, a winner by the rule or by hand, the rest with the winner', () => {
  const sink = useSmtpSink({ emptyBeforeEach: true });
  const h = useHarness({ SMTP_URL: () => sink.url });
  const f = sendingFixtures(h);
  let alice: TestAccount;
  // Ahead of the real clock, so rows queued "now" by a request are due for the test's worker.
  const clock = manualClock(new Date(Date.now() + 3_600_000));

  beforeEach(async () => {
    alice = await h.account();
  });

  /** A draft send to `count` contacts (created as ready, due now, but started only when the test's worker runs). */
  async function sendTo(count: number, name: string): Promise<{ utr: string; id: number; emails: string[] }> {
    const { sender, group } = await f.basics(alice);
    const type = await addContactType(h, alice, name);
    const emails = Array.from({ length: count }, (_, i) => `${name.toLowerCase()}${i}@example.org`);
    for (const email of emails) await f.contact(alice.user_id, type, email, { first_name: `P${email.split('@')[0]}` });
    const body = singleSendBody({ senderId: sender, groupId: group, contactTypeId: type, segmentId: 0 }, {
      single_send_name: name,
      subject: 'Original subject',
      recipient_id: [`contacts_${type}`],
      template_html: '<html><body><p>Original for ((first_name))</p><p><a href="https://acme.test/a">A offer</a></p></body></html>',
    });
    const utr = (await h.api(alice).post('/single/send/create').send(body).expect(200)).body.message.utr as string;
    const row = await h.runtime.db('single_sends').where({ utr }).first('id');
    return { utr, id: Number(row.id), emails };
  }

  async function run(): Promise<void> {
    const { worker, close } = testWorker(h, sink.url, { now: clock.now });
    await worker.runOnce().finally(close);
  }

  const details = async (utr: string) => (await h.api(alice).get(`/single-send/details?utr=${utr}`).expect(200)).body.message.singleSend[0];
  const save = (utr: string, over: Record<string, unknown> = {}) =>
    h.api(alice).post('/single/send/ab/save').send({ utr, variants: VARIANTS, test_percent: 50, winner_metric: 'opens', wait_minutes: 60, ...over });
  const open = async (token: string, agent: string) => request(h.runtime.app).get(`/open/${token}.gif`).set('User-Agent', agent).expect(200);
  /** Each address's received messages, by subject. */
  const received = () => {
    const byAddress = new Map<string, string[]>();
    for (const m of sink.messages) byAddress.set(m.to[0], [...(byAddress.get(m.to[0]) ?? []), String(m.parsed.subject)]);
    return byAddress;
  };

  test('when the wait is over then the variant with the best rate of opens by people goes to the rest, and nobody gets two', async () => {
    const send = await sendTo(20, 'Rule');
    expect((await save(send.utr).expect(200)).body).toEqual({ status: 'success', message: 'Saved Successfully' });
    expect((await details(send.utr)).ab).toEqual({
      test_percent: 50, winner_metric: 'opens', wait_minutes: 60, status: 'waiting', winner: null,
      variants: [
        { index: 0, subject: 'Plain subject', from_name: 'Acme Plain', triggered: 0, delivered: 0, unique_opens: 0, unique_clicks: 0 },
        { index: 1, subject: 'Curious subject, ((first_name))?', from_name: 'Acme News', triggered: 0, delivered: 0, unique_opens: 0, unique_clicks: 0 },
      ],
    });

    await run();
    // Half of 20 tested, five per variant; the rest waits.
    expect(sink.messages).toHaveLength(10);
    let d = await details(send.utr);
    expect(d).toMatchObject({ status: 2, triggered: 10, delivered: 10 });
    expect(d.ab).toMatchObject({ status: 'testing', winner: null });
    expect(d.ab.variants.map((v: { triggered: number; delivered: number }) => [v.triggered, v.delivered])).toEqual([[5, 5], [5, 5]]);

    // Each variant rendered with its own content, the rest from the send.
    const plain = sink.messages.filter((m) => m.parsed.subject === 'Plain subject');
    const curious = sink.messages.filter((m) => /^Curious subject, P.+\?$/.test(String(m.parsed.subject)));
    expect([plain.length, curious.length]).toEqual([5, 5]);
    expect(plain[0].parsed.from?.value[0]).toEqual({ name: 'Acme Plain', address: 'news@acme.test' });
    expect(String(plain[0].parsed.html)).toContain('Original for P');
    expect(curious[0].parsed.from?.value[0]).toEqual({ name: 'Acme News', address: 'news@acme.test' });
    expect(String(curious[0].parsed.html)).toContain('Variant B for P');
    // Each variant's tracked link leads to its own address (links are numbered by URL across the variants).
    const clickOf = (html: unknown) => new URL(/href="([^"]+\/c\/[^"]+)"/.exec(String(html))![1]).pathname;
    expect((await request(h.runtime.app).get(clickOf(plain[0].parsed.html)).expect(302)).headers.location).toBe('https://acme.test/a');
    expect((await request(h.runtime.app).get(clickOf(curious[0].parsed.html)).expect(302)).headers.location).toBe('https://acme.test/b');

    // Variant 0: three automated opens (excluded). Variant 1: two opens by people.
    const ledger = await f.ledger(send.id);
    const ofVariant = (i: number) => ledger.filter((r) => Number(r.ab_variant) === i && Number(r.state) === 2);
    for (const row of ofVariant(0).slice(0, 3)) await open(f.token(Number(row.id)), MACHINE);
    for (const row of ofVariant(1).slice(0, 2)) await open(f.token(Number(row.id)), PERSON);

    // Before the wait is over nothing more goes.
    clock.advance(59 * 60_000);
    await run();
    expect(sink.messages).toHaveLength(10);
    expect((await details(send.utr)).ab.status).toBe('testing');

    clock.advance(60_000);
    await run();
    d = await details(send.utr);
    expect(d).toMatchObject({ status: 3, triggered: 20, delivered: 20 });
    expect(d.ab).toMatchObject({ status: 'sent', winner: 1 });
    expect(d.ab.variants.map((v: { triggered: number; unique_opens: number }) => [v.triggered, v.unique_opens])).toEqual([[5, 0], [15, 2]]);
    // The send's totals add up the variants.
    expect(d.ab.variants.reduce((n: number, v: { delivered: number }) => n + v.delivered, 0)).toBe(d.delivered);

    // The dashboard's view: the figures the rule decided on, kept; the rest counted apart; the
    // choice said to be the rule's, and logged as the service's own in the same transaction.
    const { db, services } = h.runtime;
    const shown = await services.abTests.details(send.id);
    expect(shown).toMatchObject({ chosen_by: 'rule', held: 0, rest: { triggered: 10, delivered: 10, unique_opens: 0 } });
    expect(shown!.decided.map((v) => v && [v.triggered, v.delivered, v.unique_opens])).toEqual([[5, 5, 0], [5, 5, 2]]);
    expect(await db('audit_log').where({ user_id: alice.user_id, action: 'single_send.ab_winner_chosen' }).select('actor_type', 'record_id', 'summary')).toEqual([
      { actor_type: 'system', record_id: send.utr, summary: 'Rule: variant B won by the test’s rule, sent to the other 10 recipients' },
    ]);
    // A resend proposes the subject most recipients got: B's (15 of 20), not the send's own.
    expect(await services.resends.proposedSubject({ userId: alice.user_id }, send.utr)).toBe('Curious subject, ((first_name))?');

    const got = received();
    expect([...got.keys()].sort()).toEqual([...send.emails].sort());
    for (const subjects of got.values()) expect(subjects).toHaveLength(1);
    expect(sink.messages.filter((m) => String(m.parsed.subject).startsWith('Curious'))).toHaveLength(15);

    // Once sent, the test can neither be chosen again nor changed.
    expect((await h.api(alice).get(`/single/send/ab/choose?utr=${send.utr}&variant=0`).expect(409)).body.errors).toBe('The A/B test\'s winner has already been sent.');
    expect((await save(send.utr).expect(409)).body.status).toBe('failed');
  });

  test('when a variant is chosen by hand then it goes to the rest at once, and the wait no longer matters', async () => {
    const send = await sendTo(10, 'Manual');
    await save(send.utr, { variants: [...VARIANTS, { subject: 'Third subject', preheader: 'Third preheader' }], test_percent: 30, winner_metric: 'clicks', wait_minutes: 4320 }).expect(200);
    expect((await h.api(alice).get(`/single/send/ab/choose?utr=${send.utr}&variant=2`).expect(409)).body).toEqual({
      status: 'failed',
      errors: 'The A/B test has not started: a winner can be chosen once its send is sending.',
    });

    await run();
    // 30% of 10: three, one per variant.
    expect(sink.messages).toHaveLength(3);
    expect((await details(send.utr)).ab.variants.map((v: { triggered: number }) => v.triggered)).toEqual([1, 1, 1]);

    expect((await h.api(alice).get(`/single/send/ab/choose?utr=${send.utr}&variant=3`).expect(422)).body).toEqual({ status: 'failed', errors: { variant: ['The selected variant is invalid.'] } });
    expect((await h.runtime.services.abTests.details(send.id))).toMatchObject({ held: 7, chosen_by: null, rest: null, decided: [null, null, null] });
    // The audit entry is written in the choice's transaction: when it cannot be written (here a
    // route declared as a read, which may record nothing), no winner goes either.
    const asRead = { userId: alice.user_id, route: { name: 'GET /a-read', effect: 'reads' as const, recorded: [] } };
    await expect(h.runtime.services.abTests.choose(asRead, send.utr, 2)).rejects.toThrow('GET /a-read is registered as a read');
    expect(await h.runtime.services.abTests.details(send.id)).toMatchObject({ status: 'testing', winner: null, held: 7, chosen_by: null });
    expect((await h.api(alice).get(`/single/send/ab/choose?utr=${send.utr}&variant=2`).expect(200)).body).toEqual({ status: 'success', message: 'Winner Sent' });
    const entries = await h.runtime.db('audit_log').where({ user_id: alice.user_id, action: 'single_send.ab_winner_chosen' }).select('actor_type', 'summary');
    expect(entries).toEqual([{ actor_type: expect.not.stringMatching(/^system$/), summary: 'Manual: variant C picked by hand, sent to the other 7 recipients' }]);
    await run();

    const d = await details(send.utr);
    expect(d).toMatchObject({ status: 3, triggered: 10, delivered: 10 });
    expect(d.ab).toMatchObject({ status: 'sent', winner: 2 });
    expect(d.ab.variants.map((v: { triggered: number }) => v.triggered)).toEqual([1, 1, 8]);
    const got = received();
    expect([...got.keys()].sort()).toEqual([...send.emails].sort());
    for (const subjects of got.values()) expect(subjects).toHaveLength(1);
    expect(sink.messages.filter((m) => m.parsed.subject === 'Third subject')).toHaveLength(8);
    expect(await h.runtime.services.abTests.details(send.id)).toMatchObject({ chosen_by: 'hand', held: 0, rest: { triggered: 7, delivered: 7 }, decided: [{ triggered: 1 }, { triggered: 1 }, { triggered: 1 }] });
    expect(await h.runtime.services.resends.proposedSubject({ userId: alice.user_id }, send.utr)).toBe('Third subject');
    expect(String(sink.messages.find((m) => m.parsed.subject === 'Third subject')!.parsed.html)).toContain('Third preheader');
  });

  test('when the audience is no larger than the variants then everyone is in the test, no winner is due, and the send completes', async () => {
    const send = await sendTo(2, 'Tiny');
    await save(send.utr).expect(200);
    await run();
    const d = await details(send.utr);
    expect(d).toMatchObject({ status: 3, triggered: 2, delivered: 2 });
    expect(d.ab).toMatchObject({ status: 'sent', winner: null });
    expect(d.ab.variants.map((v: { triggered: number }) => v.triggered)).toEqual([1, 1]);
    expect((await h.api(alice).get(`/single/send/ab/choose?utr=${send.utr}&variant=0`).expect(409)).body.errors).toBe('The A/B test\'s winner has already been sent.');
  });

  test('when the test is saved with wrong values then 422 names every field, nested ones by index, in JSON and as form fields', async () => {
    const send = await sendTo(2, 'Invalid');
    const res = await h.api(alice).post('/single/send/ab/save').send({
      utr: send.utr,
      variants: [{ subject: ['x'] }, { from_name: 'n'.repeat(256), template_html: '<p>x</p>', template_json: '{}' }],
      test_percent: 60,
      winner_metric: 'replies',
      wait_minutes: 5,
    }).expect(422);
    expect(res.body).toEqual(failed({
      'variants.0.subject': ['The variants.0.subject must be a string.'],
      'variants.1.from_name': ['The variants.1.from name may not be greater than 255 characters.'],
      'variants.1.template_json': ['The variants.1.template_json field prohibits variants.1.template_html from being present.'],
      test_percent: ['The test percent must be between 10 and 50.'],
      winner_metric: ['The selected winner metric is invalid.'],
      wait_minutes: ['The wait minutes must be between 10 and 4320.'],
    }));
    expect((await h.api(alice).post('/single/send/ab/save').send({}).expect(422)).body.errors).toEqual({
      utr: ['The utr field is required.'],
      variants: ['The variants field is required.'],
      test_percent: ['The test percent field is required.'],
      winner_metric: ['The winner metric field is required.'],
      wait_minutes: ['The wait minutes field is required.'],
    });
    expect((await save(send.utr, { variants: [VARIANTS[0]] }).expect(422)).body.errors).toEqual({ variants: ['The variants must have at least 2 items.'] });
    // Liquid that does not parse is refused as in the send's own content, on the variant's field.
    const liquid = (await save(send.utr, { variants: [VARIANTS[0], { subject: '{% if first_name %}Hi {{ first_name }}' }] }).expect(422)).body.errors;
    expect(Object.keys(liquid)).toEqual(['variants.1.subject']);
    expect(liquid['variants.1.subject'][0]).toMatch(/^The subject has a Liquid error on line 1/);
    expect((await save(send.utr, { variants: [...VARIANTS, ...VARIANTS, VARIANTS[0]] }).expect(422)).body.errors).toEqual({ variants: ['The variants may not have more than 4 items.'] });
    expect((await save('00000000-0000-4000-8000-000000000000').expect(404)).body).toEqual({ status: 'failed', errors: 'Record Not Found' });

    // Indexed form fields, urlencoded and multipart.
    const pairs: [string, string][] = [['utr', send.utr], ['variants[0][subject]', 'Form A'], ['variants[1][subject]', 'Form B'], ['variants[1][from_name]', 'Form sender'], ['test_percent', '20'], ['winner_metric', 'clicks'], ['wait_minutes', '30']];
    await h.api(alice).post('/single/send/ab/save').type('form').send(pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')).expect(200);
    const multipart = h.api(alice).post('/single/send/ab/save');
    for (const [k, v] of pairs) multipart.field(k, v === 'Form B' ? 'Form B2' : v);
    await multipart.expect(200);
    expect((await details(send.utr)).ab).toMatchObject({
      test_percent: 20, winner_metric: 'clicks', wait_minutes: 30, status: 'waiting',
      variants: [{ index: 0, subject: 'Form A', from_name: 'Acme News' }, { index: 1, subject: 'Form B2', from_name: 'Form sender' }],
    });
    // A send without a test says so.
    const other = await sendTo(1, 'Plain');
    expect((await details(other.utr)).ab).toBeNull();
    expect((await h.api(alice).get(`/single/send/ab/choose?utr=${other.utr}&variant=0`).expect(409)).body.errors).toBe('This single send has no A/B test; save one first.');
  });

  test('when the send is paused during the test then the winner waits for it to resume, and a cancelled send never sends the rest', async () => {
    // Sends of the tests before are due too: count each send's own messages.
    const to = (prefix: string) => sink.messages.filter((m) => m.to[0].startsWith(prefix));
    const send = await sendTo(10, 'Paused');
    await save(send.utr, { test_percent: 20 }).expect(200);
    await run();
    expect(to('paused')).toHaveLength(2);
    await h.api(alice).get(`/single/send/pause?utr=${send.utr}`).expect(200);
    clock.advance(61 * 60_000);
    await run();
    expect(to('paused')).toHaveLength(2);
    expect((await details(send.utr)).ab.status).toBe('testing');
    expect((await h.api(alice).get(`/single/send/ab/choose?utr=${send.utr}&variant=0`).expect(409)).body.errors).toBe('The A/B test\'s send is not sending (paused or cancelled); resume it first.');
    await h.api(alice).get(`/single/send/resume?utr=${send.utr}`).expect(200);
    await run();
    expect(to('paused')).toHaveLength(10);
    expect((await details(send.utr)).ab).toMatchObject({ status: 'sent', winner: 0 });

    const cancelled = await sendTo(10, 'Cancelled');
    await save(cancelled.utr, { test_percent: 20 }).expect(200);
    await run();
    await h.api(alice).get(`/single/send/cancel?utr=${cancelled.utr}`).expect(200);
    clock.advance(61 * 60_000);
    await run();
    expect(to('cancelled')).toHaveLength(2);
    expect(Number((await h.runtime.db('send_messages').where({ single_send_id: cancelled.id, state: 8 }).count({ n: '*' }).first())?.n)).toBe(0);
  });
});
