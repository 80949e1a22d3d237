import type { Page } from 'playwright-core';
import { SINGLE_SEND_STATUS } from '../../src/lib/constants';
import { addAutomation, audienceOf, berlin, scheduleBody, singleSendBody } from '../support/fixtures';
import type { Harness, TestAccount } from '../support/harness';

/**
 * The dashboard pages a check walks (axe, a phone's targets): every page of the navigation as
 * the signed-in owner sees it, the forms for new records, and the pages of one record of each
 * kind, with an account furnished so that lists have rows (a contact, a send, an automation
 * with a step, a segment, a relay, a signup form, an invited team member, a second API key). Needs
 * RELAY_ALLOW_PRIVATE for the relay. `page` is signed in as `account`.
 */
export async function walkedPages(h: Harness, account: TestAccount, page: Page): Promise<string[]> {
  const ctx = { userId: account.user_id };
  const { services } = h.runtime;
  const audience = await audienceOf(h, account, await berlin(h));
  await h.api(account).post('/contacts/add').send({ contact_type_id: audience.contactTypeId, email: 'ada@example.org', first_name: 'Ada', country: 1 }).expect(200);
  const send = await h.api(account).post('/single/send/create').send(singleSendBody(audience)).expect(200);
  // A draft with a date: its confirmation says when, in the account's time zone.
  const scheduled = await h.api(account).post('/single/send/create').send(singleSendBody(audience, { single_send_name: 'December news', schedule_type: 1, schedule_date: '2099-01-01', schedule_time: '09:00:00' })).expect(200);
  await h.runtime.db('single_sends').where({ utr: scheduled.body.message.utr }).update({ status: SINGLE_SEND_STATUS.initiate });
  const automation = await addAutomation(h, account, { contact_type_id: audience.contactTypeId });
  await h.api(account).post('/automations/schedule/create').send(scheduleBody(automation, audience.senderId)).expect(200);
  const step = await h.runtime.db('automation_schedules').where({ user_id: account.user_id }).first('utr');
  // With a relay, the send's and the step's forms offer the choice of relay.
  await h.api(account).post('/relays/save').send({ name: 'Office', kind: 'smtp', url: 'smtp://127.0.0.1:2525' }).expect(200);
  const formId = await services.signupForms.add(ctx, { name: 'Monthly letter', contact_type_id: audience.contactTypeId, fields: ['first_name', 'last_name'], group_ids: [], thank_you: '' });
  await services.teamUsers.invite(ctx, { email: 'eve.with.a.long.address@example.org', role: 'editor', name: 'Eve' });
  await services.apiKeys.create(ctx, { name: 'Reporting', role: 'analyst' });

  const nav = await page.locator('nav .nav-links a[href^="/"]').evaluateAll((links) => links.map((a) => (a as unknown as { getAttribute(name: string): string }).getAttribute('href')));
  return [...new Set([...nav,
    '/single-sends/new', '/automations/new', '/segments/new', '/contacts/new', '/contacts/import', '/senders/new', '/signup-forms/new', `/signup-forms/${formId}`,
    `/single-sends/${send.body.message.utr}`, `/single-sends/${scheduled.body.message.utr}`, `/single-sends/${scheduled.body.message.utr}/confirm?when=schedule`, `/automations/${automation}`, `/automations/${automation}/steps/${step.utr}`, `/segments/${audience.segmentId}`])];
}
