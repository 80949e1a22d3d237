import { useHarness } from '../support/harness';
import { sendingFixtures, testWorker } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';
import { signIn, WebClient } from '../support/web';

describe('dashboard: a sent send\'s follow-ups', () => {
  const sink = useSmtpSink({ emptyBeforeEach: true });
  const h = useHarness({ SMTP_URL: () => sink.url });
  const f = sendingFixtures(h);
  const [alice] = h.accounts(1);
  let web: WebClient;
  let utr: string;
  let sendId: number;

  beforeAll(async () => {
    web = await signIn(h, alice);
    const { sender, group, type } = await f.basics(alice, 'Readers');
    for (const name of ['ann', 'bob', 'cat']) await f.contact(alice.user_id, type, `${name}@example.org`, { first_name: name });
    sendId = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);
    utr = (await f.send(sendId)).utr as string;
  });

  test('when a sent send is shown then it offers the resend and the recipients download, and the resend page counts its audience first', async () => {
    const page = await web.get(`/single-sends/${utr}`).expect(200);
    expect(page.text).toContain(`href="/single-sends/${utr}/resend"`);
    expect(page.text).not.toContain('Retry failed');
    const resend = await web.get(`/single-sends/${utr}/resend`).expect(200);
    expect(resend.text).toContain('It goes to <strong>3 recipients</strong> who received it and have not opened it.');

    const csv = await web.get(`/single-sends/${utr}/recipients.csv`).expect(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.text.trim().split('\r\n').slice(1).map((line) => line.split(',').slice(1, 3).join(',')).sort()).toEqual([
      'ann@example.org,delivered', 'bob@example.org,delivered', 'cat@example.org,delivered',
    ]);
  });

  test('when a resend is saved as a draft then its confirm step counts the non-openers, and a subject too long is shown under its field', async () => {
    const tooLong = await web.post(`/single-sends/${utr}/resend`, { subject: 'x'.repeat(1000), when: 'draft' }).expect(422);
    expect(tooLong.text).toContain('The subject may not be greater than 998 characters.');

    const saved = await web.post(`/single-sends/${utr}/resend`, { subject: 'Did you see this?', when: 'draft' }).expect(303);
    const draftPath = String(saved.headers.location);
    const draft = await web.get(draftPath).expect(200);
    expect(draft.text).toContain('Resend saved as a draft');
    expect(draft.text).toContain('Those who did not open');
    const confirm = await web.get(`${draftPath}/confirm?when=now`).expect(200);
    expect(confirm.text).toContain('It goes to <strong>3 recipients</strong> now.');
  });

  test('when retry is posted for a send with nothing failed then nothing is queued and the page says so', async () => {
    const res = await web.post(`/single-sends/${utr}/retry-failed`).expect(303);
    const page = await web.get(String(res.headers.location)).expect(200);
    expect(page.text).toContain('Nothing to retry');
    expect((await f.send(sendId)).status).toBe(3);
  });
});
