import { addAutomation, addSender, Audience, audienceOf, berlin, singleSendBody } from '../support/fixtures';
import { NOT_FOUND } from '../support/expectations';
import { useHarness } from '../support/harness';

/** Hostile input across resources: each answers in the reference's envelope, never a 500 or HTML. */
describe('contract audit: hostile input', () => {
  const h = useHarness();
  const [alice] = h.accounts(1);
  let a: Audience;

  beforeAll(async () => {
    a = await audienceOf(h, alice, await berlin(h));
  });

  const HUGE = '9999999999'; // an integer past the 32-bit id columns (PostgreSQL refuses it outright)

  test('when an addressed id is past the id range then 404 Record Not Found, not a 500', async () => {
    for (const path of [
      `/contacts-type/view?contact_type_id=${HUGE}`,
      `/unsubscribes-groups/details?id=${HUGE}`,
      `/unsubscribes-groups/recipients-list?groupId=${HUGE}`,
      `/sender/details?sender_id=${HUGE}`,
    ]) {
      const res = await h.api(alice).get(path);
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 404, body: NOT_FOUND });
    }
    for (const path of [`/custom-fields/delete?id=${HUGE}`, `/global-unsubscribes/delete?id=${HUGE}`, `/sender/delete?sender_id=${HUGE}`]) {
      const res = await h.api(alice).delete(path);
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 404, body: NOT_FOUND });
    }
    const manual = await h.api(alice).post('/unsubscribes-groups/manually-add').send({ unsubscribe_groups_id: HUGE, email_address: 'a@example.com' }).expect(404);
    expect(manual.body).toEqual(NOT_FOUND);
  });

  test('when a bulk delete names ids past the range, zero or negative then they match nothing: 404', async () => {
    for (const path of ['/global-unsubscribes/bulk-delete', '/notification-recipient/bulk-delete', '/single/send/bulk-delete', '/automations/bulk-delete']) {
      const res = await h.api(alice).post(path).send({ strIds: [Number(HUGE), 0, -4] });
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 404, body: NOT_FOUND });
    }
  });

  test('when a referenced id is past the range then 422 The selected … is invalid', async () => {
    const sender = await h.api(alice).post('/sender/save')
      .send({ from_name: 'a', from_email: 'a@example.com', reply_to_email: 'a@example.com', country_id: HUGE, company_address: 'x', nickname: 'n' })
      .expect(422);
    expect(sender.body).toEqual({ status: 'failed', errors: { country_id: ['The selected country id is invalid.'] } });
    const send = await h.api(alice).post('/single/send/create')
      .send(singleSendBody(a, { template_id: HUGE, sender_id: HUGE, unsubscribe_group_id: HUGE, recipient_id: [`contacts_${HUGE}`], exclude_specific_recipient_id: [`segments_${HUGE}`] }))
      .expect(422);
    expect(send.body.errors).toEqual({
      template_id: ['The selected template id is invalid.'],
      sender_id: ['The selected sender id is invalid.'],
      unsubscribe_group_id: ['The selected unsubscribe group id is invalid.'],
      recipient_id: ['The selected recipient id is invalid.'],
      exclude_specific_recipient_id: ['The selected exclude specific recipient id is invalid.'],
    });
    const geo = await h.api(alice).get(`/get/country-state-city?country_id=${HUGE}`).expect(422);
    expect(geo.body).toEqual({ status: 'failed', errors: { country_id: ['The selected country id is invalid.'] } });
  });

  test('when an automation group id names nothing then 422, and the group is neither dropped nor cleared', async () => {
    for (const group of [HUGE, '99999999999999999999']) {
      const created = await h.api(alice).post('/automations/create').send({ type: 'welcome', automation_name: 'x', unsubscribe_group_id: group }).expect(422);
      expect(created.body).toEqual({ status: 'failed', errors: { unsubscribe_group_id: ['The selected unsubscribe group id is invalid.'] } });
    }
    const utr = await addAutomation(h, alice, { unsubscribe_group_id: a.groupId });
    const updated = await h.api(alice).post(`/automations/update?utr=${utr}`).send({ unsubscribe_group_id: '99999999999999999999' }).expect(422);
    expect(updated.body).toEqual({ status: 'failed', errors: { unsubscribe_group_id: ['The selected unsubscribe group id is invalid.'] } });
    const details = await h.api(alice).get(`/automations/details?utr=${utr}`).expect(200);
    expect(details.body.message.automation.unsubscribe_group_id).toBe(String(a.groupId));
  });

  test('when page is past the range then 422, not a page of Infinity', async () => {
    const res = await h.api(alice).get('/contacts-type?page=99999999999999999999999').expect(422);
    expect(res.body).toEqual({ status: 'failed', errors: { page: ['The page may not be greater than 2147483647.'] } });
  });

  test('when an array comes where one value is expected then 422 names the field', async () => {
    const group = await h.api(alice).post('/unsubscribes-groups/save').type('form').send('group_name=g&description=d&is_display[]=1').expect(422);
    expect(group.body).toEqual({ status: 'failed', errors: { is_display: ['The is display field must be true or false.'] } });
    const field = await h.api(alice).post('/custom-fields/save').type('form').send('field_name=shoe&field_type[]=text').expect(422);
    expect(field.body).toEqual({ status: 'failed', errors: { field_type: ['The selected field type is invalid.'] } });
    const automation = await h.api(alice).post('/automations/create').send({ type: ['welcome'], automation_name: 'x' }).expect(422);
    expect(automation.body).toEqual({ status: 'failed', errors: { type: ['The selected type is invalid.'] } });
    const send = await h.api(alice).post('/single/send/create').send(singleSendBody(a, { schedule_type: [0] })).expect(422);
    expect(send.body).toEqual({ status: 'failed', errors: { schedule_type: ['The selected schedule type is invalid.'] } });
    expect((await h.api(alice).get('/custom-fields')).body.message.customFields).toEqual([]);
  });

  test('when an integer is below its minimum then the message says so', async () => {
    const res = await h.api(alice).post('/single/send/create').send(singleSendBody(a, { sender_id: 0 })).expect(422);
    expect(res.body).toEqual({ status: 'failed', errors: { sender_id: ['The sender id must be at least 1.'] } });
  });

  test('when several fields fail then errors list them in the order of the reference', async () => {
    const res = await h.api(alice).post('/sender/save').send({}).expect(422);
    expect(Object.keys(res.body.errors)).toEqual(['from_name', 'from_email', 'reply_to_email', 'country_id', 'company_address', 'nickname']);
    const send = await h.api(alice).post('/single/send/create').send({}).expect(422);
    expect(Object.keys(send.body.errors)).toEqual([
      'template_id', 'sender_id', 'unsubscribe_group_id', 'single_send_name', 'subject', 'preheader', 'recipient_id', 'schedule_type',
    ]);
  });

  test('when a utr comes in upper case then it names the same record', async () => {
    const utr = await addAutomation(h, alice, {});
    const res = await h.api(alice).get(`/automations/details?utr=${utr.toUpperCase()}`).expect(200);
    expect(res.body.message.automation.utr).toBe(utr);
  });

  test('when a path under the prefix has extra slashes then 404 Not Found in JSON', async () => {
    const res = await h.api(alice).get('/senders//').expect(404);
    expect(res.body).toEqual({ status: 'failed', errors: 'Not Found' });
  });

  test('when a verification link has broken escapes then 400, not 500', async () => {
    const request = (await import('supertest')).default;
    const res = await request(h.runtime.app).get('/verify-sender/%ff%fe').expect(400);
    expect(res.text).toBe('Bad Request');
  });

  test('when a sender has no zip code or second address line then they are empty strings, as the reference types them', async () => {
    const place = await berlin(h);
    const id = await addSender(h, alice, place, { zip_code: '', company_address2: '', state_id: '', city_id: '' });
    const res = await h.api(alice).get(`/sender/details?sender_id=${id}`).expect(200);
    expect(res.body.message.sender).toMatchObject({ zip_code: '', company_address2: '', state_id: null, city_id: null });
  });
});
