import type { Request } from 'express';
import { sendSuccess } from '../lib/envelope';
import { validate } from '../http/validation';
import type { Services } from '../services';
import { utrField, utrOf } from '../http/campaign-params';
import { bulkDelete } from './crud';
import { holds, lists, ref, says } from './describe';
import { uuid } from './schema-words';
import { ApiRoutes } from './routes';
import { ctxOf } from '../http/context';
import { listMessage, PAGING_PARAMS, pagingOf } from '../http/paging';
import { changesOf, createFields, createInput, scheduleFields, scheduleInput, updateFields } from '../http/inputs/automations';
import { testSendFields, testSendInput } from '../http/inputs/single-sends';

export function mountAutomations(routes: ApiRoutes, { automations, automationSchedules, testSends }: Services): void {
  routes.get('/automations', { summary: 'List automations', response: lists('automations', ref('AutomationListed')), params: PAGING_PARAMS }, async (req, res) => {
    sendSuccess(res, listMessage('automations', await automations.list(ctxOf(req), pagingOf(req))));
  });

  routes.post('/automations/create', { summary: 'Create an automation (a draft)', response: holds({ utr: uuid }) }, validate(...createFields()), async (req, res) => {
    const utr = await automations.create(ctxOf(req), createInput(req.body));
    sendSuccess(res, { utr });
  });

  // Extension: change name, target and group (docs/decisions.md, "Automations").
  routes.post('/automations/update', { summary: 'Change an automation\'s name, target or group (extension)', response: holds({ utr: uuid }) }, validate(...updateFields()), async (req, res) => {
    await automations.update(ctxOf(req), utrOf(req), changesOf(req.body ?? {}));
    sendSuccess(res, { utr: utrOf(req) });
  });

  routes.get('/automations/duplicate', { effect: 'changes', summary: 'Duplicate an automation with its emails', response: holds({ utr: uuid }, '`message.utr`: the copy\'s.') }, validate(utrField()), async (req, res) => {
    sendSuccess(res, { utr: await automations.duplicate(ctxOf(req), utrOf(req)) });
  });

  routes.get('/automations/details', { summary: 'Show an automation', response: holds({ automation: ref('Automation') }) }, validate(utrField()), async (req, res) => {
    sendSuccess(res, { automation: await automations.get(ctxOf(req), utrOf(req)) });
  });

  routes.get('/automations/pause', { effect: 'changes', summary: 'Pause a live automation', response: says('Automation Paused Successfully') }, validate(utrField()), async (req, res) => {
    await automations.pause(ctxOf(req), utrOf(req));
    sendSuccess(res, 'Automation Paused Successfully');
  });

  routes.get('/automations/set-live', { effect: 'changes', summary: 'Set an automation live', response: says('Automation has been set live') }, validate(utrField()), async (req, res) => {
    await automations.setLive(ctxOf(req), utrOf(req));
    sendSuccess(res, 'Automation has been set live');
  });

  routes.delete('/automations/delete', { summary: 'Delete an automation', response: says('Deleted Successfully') }, validate(utrField()), async (req, res) => {
    await automations.remove(ctxOf(req), utrOf(req));
    sendSuccess(res, 'Deleted Successfully');
  });

  bulkDelete(routes, '/automations/bulk-delete', automations.removeMany, 'Delete automations');

  routes.get('/automations/schedule', { summary: 'List the emails of an automation', response: holds({ automation_schedules: { type: 'array', items: ref('AutomationSchedule') } }) }, validate(utrField()), async (req, res) => {
    sendSuccess(res, { automation_schedules: await automationSchedules.list(ctxOf(req), utrOf(req)) });
  });

  routes.post('/automations/schedule/create', { summary: 'Add an email to an automation', response: says('Schedule Added') }, validate(...scheduleFields()), async (req: Request, res) => {
    await automationSchedules.create(ctxOf(req), utrOf(req), scheduleInput(req.body));
    sendSuccess(res, 'Schedule Added');
  });

  // Extension: `utr` in the query is the schedule's own, as for delete.
  routes.post('/automations/schedule/update', { summary: 'Change an email of an automation (extension; utr is the email\'s)', response: says('Schedule Updated') }, validate(...scheduleFields()), async (req: Request, res) => {
    await automationSchedules.update(ctxOf(req), utrOf(req), scheduleInput(req.body));
    sendSuccess(res, 'Schedule Updated');
  });

  // Extension: a step's message for one contact, to up to 10 addresses; `utr` is the schedule's.
  routes.post('/automations/schedule/test', { summary: 'Send a test of an automation email (extension; utr is the email\'s)', response: says('Test Email Sent') }, validate(utrField(), ...testSendFields()), async (req: Request, res) => {
    const { addresses, contactId } = testSendInput(req.body);
    await testSends.automationStep(ctxOf(req), utrOf(req), addresses, contactId);
    sendSuccess(res, 'Test Email Sent');
  });

  routes.delete('/automations/schedule/delete', { summary: 'Delete an email of an automation', response: says('Deleted Successfully') }, validate(utrField()), async (req, res) => {
    await automationSchedules.remove(ctxOf(req), utrOf(req));
    sendSuccess(res, 'Deleted Successfully');
  });
}
