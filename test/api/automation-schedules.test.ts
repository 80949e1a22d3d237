import request from 'supertest';
import { addAutomation, addSender, Audience, audienceOf, berlin, scheduleBody, UUID } from '../support/fixtures';
import { NOT_FOUND, failed } from '../support/expectations';
import { TIMESTAMP, useHarness } from '../support/harness';

const BASE = 'http://campaigns.test';

describe('automation schedules', () => {
  const h = useHarness();
  const [alice, bob] = h.accounts(2);
  let a: Audience;
  let b: Audience;
  let automation: string;

  beforeAll(async () => {
    const place = await berlin(h);
    a = await audienceOf(h, alice, place);
    b = await audienceOf(h, bob, place);
    automation = await addAutomation(h, alice, { unsubscribe_group_id: a.groupId });
  });

  const web = () => request(h.runtime.app);
  /** The path of an absolute URL under BASE_URL, to request it from the app. */
  const pathOf = (url: string) => {
    expect(url.startsWith(`${BASE}/`)).toBe(true);
    return url.slice(BASE.length);
  };

  async function schedules(utr = automation, account = alice) {
    const res = await h.api(account).get(`/automations/schedule?utr=${utr}`).expect(200);
    expect(res.body.status).toBe('success');
    return res.body.message.automation_schedules;
  }

  test('when schedules are added then they are listed in sending order with absolute design_url and image', async () => {
    const utr = await addAutomation(h, alice, {});
    const res = await h.api(alice).post('/automations/schedule/create')
      .field('utr', utr)
      .field('sender_id', String(a.senderId))
      .field('subject', 'Welcome, ((first_name))')
      .field('waiting_period', '1')
      .field('waiting_type', 'instantly')
      .field('template_id', '4')
      .field('preview_img', 'welcome.png')
      .expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Schedule Added' });
    await h.api(alice).post('/automations/schedule/create').send(scheduleBody(utr, a.senderId, { subject: 'Day three', waiting_period: 3, waiting_type: 'days' })).expect(200);
    await h.api(alice).post('/automations/schedule/create').send(scheduleBody(utr, a.senderId, { subject: 'Hours later', waiting_period: 6, waiting_type: 'hours' })).expect(200);

    const [first, second, third] = await schedules(utr);
    const automationId = (await h.api(alice).get(`/automations/details?utr=${utr}`)).body.message.automation.id;
    expect(first).toEqual({
      id: expect.any(Number),
      user_id: alice.user_id,
      automation_id: automationId,
      sender_id: a.senderId,
      subject: 'Welcome, ((first_name))',
      waiting_period: 1,
      waiting_type: 'instantly',
      utr: expect.stringMatching(UUID),
      template_id: 4,
      preview_img: 'welcome.png',
      relay_id: null,
      template_json: '',
      template_html: '',
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: expect.stringMatching(TIMESTAMP),
      design_url: `${BASE}/api/v1/preview/schedule/${first.utr}`,
      image: `${BASE}/api/v1/templates/welcome.png`,
      track_opens: 1,
      track_clicks: 1,
    });
    expect([second.subject, second.waiting_type, second.waiting_period]).toEqual(['Day three', 'days', 3]);
    expect([third.subject, third.waiting_type, third.waiting_period]).toEqual(['Hours later', 'hours', 6]);
  });

  test('when design_url and image are opened then they answer: the rendered design, sandboxed, and the PNG', async () => {
    await h.api(alice).post('/automations/schedule/create').send(scheduleBody(automation, a.senderId, { subject: 'Template design' })).expect(200);
    const schedule = (await schedules()).find((s: { subject: string }) => s.subject === 'Template design');

    const page = await web().get(pathOf(schedule.design_url)).expect(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toMatch(/^sandbox;/);
    expect(page.text).toContain('<title>Welcome</title>');
    // Sender placeholders are filled from the schedule's sender; contact placeholders stay visible.
    expect(page.text).toContain('News Desk');
    expect(page.text).toContain('Unter den Linden 1');
    expect(page.text).not.toContain('((sender_name))');
    expect(page.text).toContain('((first_name))');

    const image = await web().get(pathOf(schedule.image)).expect(200);
    expect(image.headers['content-type']).toBe('image/png');
    expect(image.body.subarray(1, 4).toString()).toBe('PNG');
  });

  test('when the schedule has its own HTML then the design shows it, with the sender name escaped', async () => {
    const senderId = await addSender(h, alice, await berlin(h), { from_name: 'Tom & <Jerry>' });
    await h.api(alice).post('/automations/schedule/create')
      .send(scheduleBody(automation, senderId, { subject: 'Custom', template_id: 1, preview_img: 'blank.png', template_html: '<h1>Hi</h1><p>((sender_name))</p>' }))
      .expect(200);
    const schedule = (await schedules()).find((s: { subject: string }) => s.subject === 'Custom');
    expect(schedule).toMatchObject({ template_html: '<h1>Hi</h1><p>((sender_name))</p>', template_json: '', image: `${BASE}/api/v1/templates/blank.png` });
    const page = await web().get(pathOf(schedule.design_url)).expect(200);
    expect(page.text).toBe('<h1>Hi</h1><p>Tom &amp; &lt;Jerry&gt;</p>');
  });

  test('when required fields are missing then all are reported together', async () => {
    const res = await h.api(alice).post('/automations/schedule/create').send({}).expect(422);
    expect(res.body).toEqual(failed({
      utr: ['The utr field is required.'],
      sender_id: ['The sender id field is required.'],
      subject: ['The subject field is required.'],
      waiting_period: ['The waiting period field is required.'],
      waiting_type: ['The waiting type field is required.'],
      template_id: ['The template id field is required.'],
      preview_img: ['The preview img field is required.'],
    }));
  });

  test('when values are outside their lists or belong to another account then 422 names each field', async () => {
    const bad = await h.api(alice).post('/automations/schedule/create')
      .send(scheduleBody(automation, a.senderId, { waiting_type: 'weeks', waiting_period: -1 }))
      .expect(422);
    expect(bad.body.errors).toEqual({
      waiting_type: ['The selected waiting type is invalid.'],
      waiting_period: ['The waiting period must be at least 0.'],
    });
    const refs = await h.api(alice).post('/automations/schedule/create')
      .send(scheduleBody(automation, b.senderId, { template_id: 42, preview_img: 'holiday.png', template_json: '{}', template_html: '<p>x</p>' }))
      .expect(422);
    expect(refs.body.errors).toEqual({
      sender_id: ['The selected sender id is invalid.'],
      template_id: ['The selected template id is invalid.'],
      preview_img: ['The selected preview img is invalid.'],
      template_json: ['The template json field prohibits template html from being present.'],
    });
  });

  test('when the automation utr names nothing then create and list answer 404', async () => {
    const ghost = '6f1c2a44-5d7e-4c2b-9a3e-2f4b5c6d7e8f';
    await h.api(alice).post('/automations/schedule/create').send(scheduleBody(ghost, a.senderId)).expect(404, NOT_FOUND);
    await h.api(alice).get(`/automations/schedule?utr=${ghost}`).expect(404);
  });

  test('when a schedule is deleted by its own utr then it is gone and its design no longer answers', async () => {
    await h.api(alice).post('/automations/schedule/create').send(scheduleBody(automation, a.senderId, { subject: 'Doomed' })).expect(200);
    const schedule = (await schedules()).find((s: { subject: string }) => s.subject === 'Doomed');

    await h.api(alice).delete(`/automations/schedule/delete?utr=${automation}`).expect(404, NOT_FOUND);
    await h.api(bob).delete(`/automations/schedule/delete?utr=${schedule.utr}`).expect(404, NOT_FOUND);

    const res = await h.api(alice).delete(`/automations/schedule/delete?utr=${schedule.utr}`).expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Deleted Successfully' });
    expect((await schedules()).map((s: { utr: string }) => s.utr)).not.toContain(schedule.utr);
    await web().get(pathOf(schedule.design_url)).expect(404);
    await h.api(alice).delete(`/automations/schedule/delete?utr=${schedule.utr}`).expect(404);
  });

  test('when the automation is deleted then its schedules and designs are gone too', async () => {
    const utr = await addAutomation(h, alice, {});
    await h.api(alice).post('/automations/schedule/create').send(scheduleBody(utr, a.senderId)).expect(200);
    const [schedule] = await schedules(utr);
    await h.api(alice).delete(`/automations/delete?utr=${utr}`).expect(200);
    await web().get(pathOf(schedule.design_url)).expect(404);
    await h.api(alice).delete(`/automations/schedule/delete?utr=${schedule.utr}`).expect(404);
  });

  test('when a design is asked with a malformed or unknown utr then 404', async () => {
    await web().get('/preview/schedule/not-a-utr').expect(404);
    await web().get('/preview/schedule/6f1c2a44-5d7e-4c2b-9a3e-2f4b5c6d7e8f').expect(404);
  });

  test('when another account asks for the schedules then 404, and its own list stays empty', async () => {
    await h.api(bob).get(`/automations/schedule?utr=${automation}`).expect(404, NOT_FOUND);
    const own = await addAutomation(h, bob, {});
    expect(await schedules(own, bob)).toEqual([]);
  });
});
