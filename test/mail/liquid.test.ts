import request from 'supertest';
import { addCustomField, addGroup, addSegment, addVerifiedSender, addContactType, berlin, Audience, scheduleBody, sendingFixtures, singleSendBody, testWorker } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';

describe('Liquid in subjects and bodies', () => {
  const sink = useSmtpSink({ emptyBeforeEach: true });
  const h = useHarness({ SMTP_URL: () => sink.url });
  const f = sendingFixtures(h);
  const [alice] = h.accounts(1);
  let audience: Audience;
  let sender: string;

  beforeAll(async () => {
    const place = await berlin(h);
    const senderId = await addVerifiedSender(h, alice, place);
    sender = String((await h.runtime.db('senders').where({ id: senderId }).first('from_email')).from_email);
    const contactTypeId = await addContactType(h, alice);
    audience = { senderId, groupId: await addGroup(h, alice), contactTypeId, segmentId: await addSegment(h, alice, contactTypeId) };
    await addCustomField(h, alice, 'plan', 'text');
    await f.contact(alice.user_id, contactTypeId, 'ann@example.org', { first_name: 'Ann', custom_fields: { plan: 'gold' } });
    await f.contact(alice.user_id, contactTypeId, 'bob@example.org', { first_name: '', custom_fields: { plan: 'basic' } });
  });

  const campaignMail = () => sink.messages.filter((m) => m.from === sender);
  const mailTo = (address: string) => campaignMail().find((m) => m.to[0] === address)!;

  async function sendNow(overrides: Record<string, unknown>) {
    const body = singleSendBody(audience, { recipient_id: [`contacts_${audience.contactTypeId}`], template_id: 1, ...overrides });
    const utr = (await h.api(alice).post('/single/send/create').send(body).expect(200)).body.message.utr as string;
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);
    const details = (await h.api(alice).get(`/single-send/details?utr=${utr}`).expect(200)).body.message.singleSend;
    return Array.isArray(details) ? details[0] : details;
  }

  test('when a send uses Liquid then each recipient gets their own branch, a custom field decides a condition and values stay escaped', async () => {
    await h.runtime.db('contacts').where({ email: 'ann@example.org' }).update({ last_name: '<b>Lee</b>' });
    const send = await sendNow({
      subject: '{% if first_name %}Hi {{ first_name }}{% else %}Hi there{% endif %}, ((sender_name))',
      template_html:
        '<html><body><p>{% if first_name %}Hi {{ first_name }}{% else %}Hi there{% endif %}</p>' +
        '{% if plan == "gold" %}<p>Gold perks for {{ last_name | default: "you" }}</p>{% endif %}' +
        '<p>{{ city | default: "Somewhere" | capitalize }}</p><a href="https://shop.example/gold">Shop</a></body></html>',
    });
    expect(send).toMatchObject({ status: 3, delivered: 2, template_errors: 0 });

    const ann = mailTo('ann@example.org');
    expect(ann.parsed.subject).toBe(`Hi Ann, ${ann.parsed.from!.value[0].name}`);
    expect(ann.parsed.html).toContain('<p>Hi Ann</p><p>Gold perks for &lt;b&gt;Lee&lt;/b&gt;</p><p>Somewhere</p>');
    expect(ann.parsed.text).toContain('Gold perks for <b>Lee</b>');
    // The link written in the template is still tracked.
    expect(ann.parsed.html).toMatch(/<a href="http:\/\/[^"]+\/c\/[^"]+\/1">Shop<\/a>/);

    const bob = mailTo('bob@example.org');
    expect(bob.parsed.subject).toMatch(/^Hi there, /);
    expect(bob.parsed.html).toContain('<p>Hi there</p><p>Somewhere</p>');
    expect(bob.parsed.html).not.toContain('Gold perks');
  });

  test('when a value fails at render time then it renders empty, the send completes and the details count it', async () => {
    await h.runtime.db('contacts').where({ email: 'bob@example.org' }).update({ first_name: '%E0%A4%A' });
    const send = await sendNow({
      single_send_name: 'Decoded',
      subject: 'Hello {{ first_name | url_decode }}!',
      template_html: '<html><body><p>Name: [{{ first_name | url_decode }}]</p><p>Bye</p></body></html>',
    });
    expect(send).toMatchObject({ status: 3, delivered: 2, failed: 0, template_errors: 1 });
    expect(mailTo('bob@example.org').parsed.subject).toBe('Hello !');
    expect(mailTo('bob@example.org').parsed.html).toContain('<p>Name: []</p><p>Bye</p>');
    expect(mailTo('ann@example.org').parsed.html).toContain('<p>Name: [Ann]</p>');
  });

  test('when a subject or a body does not parse then saving is refused with 422 naming the line', async () => {
    const body = singleSendBody(audience, { template_id: 1, single_send_name: 'Broken' });
    const html = await h.api(alice)
      .post('/single/send/create')
      .send({ ...body, template_html: '<html><body>\n<p>Hi</p>\n{% iff first_name %}x{% endif %}\n</body></html>' })
      .expect(422);
    expect(html.body.errors.template_html).toEqual(['The template html has a Liquid error on line 3: tag "iff" not found.']);

    const subject = await h.api(alice).post('/single/send/create').send({ ...body, subject: 'Hi {{ first_name' }).expect(422);
    expect(subject.body.errors.subject[0]).toMatch(/^The subject has a Liquid error on line 1: output "\{\{ first_name" not closed/);

    const filter = await h.api(alice).post('/single/send/create').send({ ...body, subject: 'Hi {{ first_name | shout }}' }).expect(422);
    expect(filter.body.errors.subject).toEqual(['The subject has a Liquid error on line 1: undefined filter: shout.']);
    // Contacts' values stay escaped in the HTML: `raw` is no filter here.
    const raw = await h.api(alice).post('/single/send/create').send({ ...body, template_html: '<p>{{ first_name | raw }}</p>' }).expect(422);
    expect(raw.body.errors.template_html).toEqual(['The template html has a Liquid error on line 1: undefined filter: raw.']);

    // An automation step is checked alike.
    const automation = (await h.api(alice).post('/automations/create').send({ type: 'welcome', automation_name: 'Hello', unsubscribe_group_id: audience.groupId }).expect(200)).body.message.utr;
    const step = await h.api(alice)
      .post('/automations/schedule/create')
      .send(scheduleBody(automation, audience.senderId, { subject: '{% if first_name %}Hi', template_html: '<p>\n\n{{ x | nope }}</p>' }))
      .expect(422);
    expect(step.body.errors.subject[0]).toMatch(/^The subject has a Liquid error on line 1: tag \{% if first_name %\} not closed/);
    expect(step.body.errors.template_html).toEqual(['The template html has a Liquid error on line 3: undefined filter: nope.']);
    expect(await h.runtime.db('single_sends').where({ user_id: alice.user_id, single_send_name: 'Broken' }).pluck('id')).toEqual([]);
    expect(await h.runtime.db('automation_schedules').where({ user_id: alice.user_id }).pluck('id')).toEqual([]);
  });

  test('when a template tries to read a file then it is refused, and ((placeholders)) keep working beside Liquid', async () => {
    const body = singleSendBody(audience, { template_id: 1 });
    for (const tag of ["{% include '/etc/passwd' %}", "{% render '../../etc/passwd' %}", "{% layout '/etc/passwd' %}"]) {
      const res = await h.api(alice).post('/single/send/create').send({ ...body, template_html: `<p>${tag}</p>` }).expect(422);
      expect(res.body.errors.template_html[0]).toMatch(/Liquid error on line 1: tag "(include|render|layout)" not found/);
    }
    await h.runtime.db('contacts').where({ email: 'bob@example.org' }).update({ first_name: 'Bob' });
    await sendNow({
      single_send_name: 'Mixed',
      subject: 'For ((first_name)) {{ "now" | date: "%Y" }}',
      template_html: '<html><body><p>((first_name)) / {{ first_name | upcase }} / {{ "((sender_name))" }}</p></body></html>',
    });
    const bob = mailTo('bob@example.org');
    expect(bob.parsed.subject).toBe(`For Bob ${new Date().getUTCFullYear()}`);
    // A value can never spell a placeholder: its brackets are escaped.
    expect(bob.parsed.html).toContain('<p>Bob / BOB / &#40;&#40;sender_name))</p>');
  });

  test('when an automation step uses Liquid then it branches per contact and its tracked links lead where they were written', async () => {
    const trials = await addContactType(h, alice, 'Trials');
    const automation = (await h.api(alice)
      .post('/automations/create')
      .send({ type: 'welcome', automation_name: 'Steps', automation_for: `contacts_${trials}`, unsubscribe_group_id: audience.groupId })
      .expect(200)).body.message.utr;
    await h.api(alice)
      .post('/automations/schedule/create')
      .send(scheduleBody(automation, audience.senderId, { subject: 'First', template_html: '<p><a href="https://shop.example/first">First</a></p>' }))
      .expect(200);
    await h.api(alice)
      .post('/automations/schedule/create')
      .send(scheduleBody(automation, audience.senderId, {
        subject: '{{ first_name | default: "Friend" }}, step two',
        template_html: '<p>{% if plan == "gold" %}<a href="https://shop.example/gold">Gold</a>{% else %}<a href="https://shop.example/basic">Basic</a>{% endif %}</p>',
      }))
      .expect(200);
    await h.api(alice).get(`/automations/set-live?utr=${automation}`).expect(200);
    const { worker, close } = testWorker(h, sink.url);
    try {
      await f.contact(alice.user_id, trials, 'tia@example.org', { first_name: 'Tia', custom_fields: { plan: 'gold' } });
      await f.contact(alice.user_id, trials, 'tom@example.org', { custom_fields: { plan: 'basic' } });
      for (let i = 0; i < 5 && campaignMail().filter((m) => /step two/.test(String(m.parsed.subject))).length < 2; i += 1) await worker.runOnce();
    } finally {
      await close();
    }
    const stepTwo = (address: string) => campaignMail().find((m) => m.to[0] === address && /step two/.test(String(m.parsed.subject)))!;
    expect(stepTwo('tia@example.org').parsed.subject).toBe('Tia, step two');
    expect(stepTwo('tom@example.org').parsed.subject).toBe('Friend, step two');
    const follow = async (address: string) => {
      const href = /<a href="([^"]+)">/.exec(String(stepTwo(address).parsed.html))![1];
      return (await request(h.runtime.app).get(new URL(href).pathname).expect(302)).headers.location;
    };
    expect(await follow('tia@example.org')).toBe('https://shop.example/gold');
    expect(await follow('tom@example.org')).toBe('https://shop.example/basic');
  });
});
