import { useHarness } from '../support/harness';
import { manualClock, sendingFixtures, testWorker } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';
import { signIn, WebClient } from '../support/web';

describe('dashboard: a single send\'s A/B test', () => {
  const sink = useSmtpSink({ emptyBeforeEach: true });
  const h = useHarness({ SMTP_URL: () => sink.url });
  const f = sendingFixtures(h);
  const clock = manualClock(new Date(Date.now() + 3_600_000));
  const [alice] = h.accounts(1);
  let web: WebClient;
  let utr: string;
  let sendId: number;

  beforeAll(async () => {
    web = await signIn(h, alice);
    const { sender, group, type } = await f.basics(alice, 'Readers');
    for (let i = 0; i < 10; i += 1) await f.contact(alice.user_id, type, `reader${i}@example.org`, { first_name: `Reader ${i}` });
    sendId = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }], status: 0, subject: 'The send\'s own subject' });
    utr = (await f.send(sendId)).utr as string;
  });

  const form = (over: Record<string, string> = {}) => ({
    'variants[0][subject]': 'Subject <A>',
    'variants[1][subject]': 'Subject B',
    'variants[1][from_name]': 'Acme Team',
    'variants[2][subject]': '',
    'variants[3][subject]': '',
    test_percent: '20',
    winner_metric: 'opens',
    wait_minutes: '120',
    ...over,
  });

  test('when a draft is shown then it offers an A/B test, and the composer shows four variants side by side', async () => {
    const page = await web.get(`/single-sends/${utr}`).expect(200);
    expect(page.text).toContain(`href="/single-sends/${utr}/ab-test"`);
    expect(page.text).toContain('Set up an A/B test');
    const composer = await web.get(`/single-sends/${utr}/ab-test`).expect(200);
    for (const letter of ['A', 'B', 'C', 'D']) expect(composer.text).toContain(`Variant ${letter}`);
    expect(composer.text).toContain('name="variants[3][template_html]"');
  });

  test('when the composer is sent with wrong values then each message is shown in plain words beside its field, and nothing is saved', async () => {
    const res = await web.post(`/single-sends/${utr}/ab-test`, form({ 'variants[1][from_name]': 'n'.repeat(300), test_percent: '70', wait_minutes: '5' })).expect(422);
    expect(res.text).toContain('The sender name may not be greater than 255 characters.');
    expect(res.text).toContain('Choose a share between 10% and 50%.');
    expect(res.text).toContain('Choose a wait between 10 and 4320 minutes.');
    expect(res.text).toContain('value="Subject &lt;A&gt;"');
    expect((await h.api(alice).get(`/single-send/details?utr=${utr}`).expect(200)).body.message.singleSend[0].ab).toBeNull();
  });

  test('when the test is saved, the send runs and a variant is picked by hand then the page shows the progress, the rates and the winner', async () => {
    const saved = await web.post(`/single-sends/${utr}/ab-test`, form()).expect(303);
    expect(saved.headers.location).toBe(`/single-sends/${utr}`);
    let page = await web.get(`/single-sends/${utr}`).expect(200);
    expect(page.text).toContain('A/B test saved');
    expect(page.text).toContain('When the send starts, 20% of its recipients, picked at random, get the variants');
    // Only the two filled-in variants were kept; the escaped subject is shown as written.
    expect(page.text).toContain('Subject &lt;A&gt;');
    expect(page.text).not.toContain('<th scope="row">C');

    await web.post(`/single-sends/${utr}/confirm`, { when: 'now' }).expect(303);
    const { worker, close } = testWorker(h, sink.url, { now: clock.now });
    await worker.runOnce().finally(close);
    expect(sink.messages).toHaveLength(2);
    page = await web.get(`/single-sends/${utr}`).expect(200);
    expect(page.text).toContain('Testing');
    expect(page.text).toContain('Send B to the rest now');
    // It asks first, naming how many still wait for the winner (10 recipients, 2 in the test).
    expect(page.text).toContain('hx-confirm="Send variant B to the 8 recipients who have not had the test? This ends the test and cannot be undone."');

    const chosen = await web.post(`/single-sends/${utr}/ab-test/choose`, { variant: '1' }).expect(303);
    page = await web.get(String(chosen.headers.location)).expect(200);
    expect(page.text).toContain('Variant B is being sent to everyone else.');
    expect(page.text).toContain('Variant B was picked by hand and went to everyone else.');
    expect(page.text).toContain('The test’s figures below are as they were when the winner was chosen');
    const again = await web.post(`/single-sends/${utr}/ab-test/choose`, { variant: '0' }).expect(409);
    expect(again.text).toContain('The A/B test&#39;s winner has already been sent.');
  });
});
