import type { Request, Response } from 'express';
import { changesOf, createFields, createInput, scheduleFields, scheduleInput, updateFields } from '../http/inputs/automations';
import { testSendFields, testSendInput } from '../http/inputs/single-sends';
import { ctxOf } from '../http/context';
import { WAITING_TYPES } from '../lib/constants';
import { validate } from '../http/validation';
import type { Services } from '../services';
import type { AutomationRecord } from '../services/campaigns/automations';
import { NotFoundError } from '../lib/errors';
import { onInvalid } from './errors';
import { relayChoices } from './relays';
import { pagerOf, pagingOf } from './paging';
import type { WebRoutes } from './routes';
import type { Views } from './views';
import { TRACKING_SWITCHES } from './settings';
import { engagementOf } from './engagement';
import type { Config } from '../config';
import { designerChoices, editorPage } from './editor';
import { withAutomationStatus } from './statuses';

const LIST = { 'automation-list': 'automations/macros.njk#list' } as const;
const STATE = { 'automation-state': 'automations/macros.njk#state' } as const;
const TYPE_CHOICES = [
  { value: 'welcome', label: 'Welcome: each contact who joins the target after it goes live' },
  { value: 'custom', label: 'Custom: every member when it goes live, then each new one' },
];
/** "1 day", "2 days": the wait of a step in words. */
function waitingLabel(type: string, period: number): string {
  if (type === 'instantly') return 'at once';
  const unit = type === 'days' ? 'day' : type === 'hours' ? 'hour' : type;
  return `${period} ${unit}${period === 1 ? '' : 's'}`;
}

/** Automations and their steps: the same services and rules as `/automations/*`. */
export function mountAutomations(routes: WebRoutes, services: Services, views: Views, config: Config): void {
  const editor = editorPage(config);
  const { automations, automationSchedules, contactTypes, unsubscribeGroups, senders, designTemplates, segments } = services;
  const utrOfPath = (req: Request) => String(req.params.utr);

  /** What an automation can target: the account's contact types and segments, as `contacts_{id}` / `segments_{id}`. */
  const targetChoices = async (req: Request) => {
    const [types, segmentNames] = await Promise.all([contactTypes.list(ctxOf(req)), segments.names(ctxOf(req))]);
    return [
      ...types.rows.map((t) => ({ value: `contacts_${t.id}`, label: `Contact type: ${t.name}`, name: t.name })),
      ...segmentNames.map((g) => ({ value: `segments_${g.id}`, label: `Segment: ${g.segment_name}`, name: `Segment: ${g.segment_name}` })),
    ];
  };
  const targets = async (req: Request) => {
    const [choices, groups] = await Promise.all([targetChoices(req), unsubscribeGroups.list(ctxOf(req))]);
    return {
      targets: [{ value: '', label: 'No target yet' }, ...choices],
      groups: [{ value: '', label: 'No group yet (needed to go live)' }, ...groups.rows.map((g) => ({ value: String(g.id), label: g.group_name }))],
      targetNames: new Map(choices.map((c) => [c.value, c.name])),
    };
  };
  const present = (a: AutomationRecord, names: Map<string, string>) => {
    const target = a.automation_for_table && a.automation_for !== null ? `${a.automation_for_table}${a.automation_for}` : '';
    return {
      ...withAutomationStatus(a),
      target,
      targetName: target ? (names.get(target) ?? target) : '',
    };
  };

  const listPage = async (req: Request, res: Response) => {
    const [result, choices] = await Promise.all([automations.list(ctxOf(req), pagingOf(req)), targetChoices(req)]);
    const names = new Map(choices.map((c) => [c.value, c.name]));
    const rows = result.rows.map((a) => present(a, names));
    views.page(req, res, 'automations/index.njk', { title: 'Automations', automations: rows, pager: pagerOf(req, result, '/automations') }, { fragments: LIST });
  };
  const newForm = async (req: Request) => ({ title: 'New automation', types: TYPE_CHOICES, ...(await targets(req)) });
  const showData = async (req: Request) => {
    const ctx = ctxOf(req);
    const utr = utrOfPath(req);
    const [automation, pausedReason, schedules, choice, senderList, templates, relays] = await Promise.all([
      automations.get(ctx, utr),
      automations.pausedReason(ctx, utr),
      automationSchedules.list(ctx, utr),
      targets(req),
      senders.list(ctx),
      designTemplates.list(),
      relayChoices(services.relays, req),
    ]);
    const shown = present(automation, choice.targetNames);
    const counts = {
      delivered: automation.total_delivered, uniqueOpens: automation.total_unique_opens, totalOpens: automation.total_opens,
      uniqueClicks: automation.total_unique_clicks, totalClicks: automation.total_clicks, unsubscribes: automation.total_unsubscribe, bounces: automation.total_bounces,
    };
    const engagement = automation.total_triggered > 0 ? await engagementOf(services, req, { automationId: automation.id }, counts, { opens: true }) : undefined;
    const senderNames = new Map(senderList.rows.map((s) => [s.id, `${s.nickname} — ${s.from_email}`]));
    return {
      title: automation.automation_name,
      automation: shown,
      pausedReason,
      settings: { automation_name: shown.automation_name, automation_for: shown.target, unsubscribe_group_id: shown.unsubscribe_group_id ?? '' },
      schedules: schedules.map((s) => ({ ...s, senderName: senderNames.get(s.sender_id) ?? `#${s.sender_id}`, waitingLabel: waitingLabel(s.waiting_type, s.waiting_period) })),
      senders: senderList.rows.map((s) => ({ value: String(s.id), label: `${s.nickname} — ${s.from_email}${s.is_verified ? '' : ' (not verified)'}` })),
      templates: templates.rows.map((t) => ({ value: String(t.id), label: t.template_name })),
      waitingTypes: WAITING_TYPES.map((w) => ({ value: w, label: w === 'instantly' ? 'At once' : `After some ${w}` })),
      switches: TRACKING_SWITCHES,
      relays,
      engagement,
      ...choice,
    };
  };
  const showPage = async (req: Request, res: Response) => {
    const { track_opens, track_clicks } = req.account!;
    const data = await showData(req);
    // The first step goes out when the contact joins (a welcome, a first test); later ones wait a day.
    const waiting = data.schedules.length === 0 ? { waiting_type: 'instantly', waiting_period: '1' } : { waiting_type: 'days', waiting_period: '1' };
    views.page(req, res, 'automations/show.njk', { ...data, values: { ...waiting, track_opens, track_clicks } }, { fragments: STATE });
  };

  routes.get('/automations', listPage);

  routes.get('/automations/new', async (req, res) => {
    views.page(req, res, 'automations/new.njk', { ...(await newForm(req)), values: { type: 'welcome' } });
  });

  routes.post('/automations/new', onInvalid('automations/new.njk', newForm), validate(...createFields()), async (req, res) => {
    const utr = await automations.create(ctxOf(req), createInput(req.body));
    views.redirect(res, `/automations/${utr}`, 'Automation created as a draft: add its steps, then set it live.');
  });

  routes.get('/automations/:utr', showPage);

  // The hidden utr field feeds the API's own rules, which read it from the body.
  routes.post('/automations/:utr/settings', onInvalid('automations/show.njk', showData), validate(...updateFields()), async (req, res) => {
    await automations.update(ctxOf(req), utrOfPath(req), changesOf(req.body));
    views.redirect(res, `/automations/${utrOfPath(req)}`, 'Automation saved.');
  });

  routes.post('/automations/:utr/live', async (req, res) => {
    await automations.setLive(ctxOf(req), utrOfPath(req));
    await views.changed(req, res, `/automations/${utrOfPath(req)}`, 'The automation is live.', () => showPage(req, res));
  });

  routes.post('/automations/:utr/pause', async (req, res) => {
    await automations.pause(ctxOf(req), utrOfPath(req));
    await views.changed(req, res, `/automations/${utrOfPath(req)}`, 'The automation is paused.', () => showPage(req, res));
  });

  /** The template's preview image is what the API asks clients to send as preview_img. */
  const withPreviewImage = async (req: Request, _res: Response, next: () => void) => {
    const template = await designTemplates.get(Number(req.body.template_id) || 0).catch(() => undefined);
    req.body.preview_img = template?.preview_image ?? '';
    next();
  };

  routes.post('/automations/:utr/steps', onInvalid('automations/show.njk', showData), withPreviewImage, validate(...scheduleFields()), async (req, res) => {
    await automationSchedules.create(ctxOf(req), utrOfPath(req), scheduleInput(req.body));
    views.redirect(res, `/automations/${utrOfPath(req)}`, 'Step added.');
  });

  /** A step of this automation (404 for a step of another one, or of another account). */
  const stepOf = async (req: Request) => {
    const automation = await automations.get(ctxOf(req), utrOfPath(req));
    const step = await automationSchedules.get(ctxOf(req), String(req.params.step));
    if (step.automation_id !== automation.id) throw new NotFoundError();
    return { automation, step };
  };
  const stepData = async (req: Request) => {
    const { automation, step } = await stepOf(req);
    const [senderList, templates, designer, relays] = await Promise.all([senders.list(ctxOf(req)), designTemplates.list(), designerChoices(services, req), relayChoices(services.relays, req)]);
    const target = automation.automation_for_table && automation.automation_for !== null ? `${automation.automation_for_table}${automation.automation_for}` : '';
    return {
      title: `Step: ${step.subject}`,
      automation,
      step,
      target,
      ...designer,
      senders: senderList.rows.map((s) => ({ value: String(s.id), label: `${s.nickname} — ${s.from_email}${s.is_verified ? '' : ' (not verified)'}` })),
      templates: templates.rows.map((t) => ({ value: String(t.id), label: t.template_name })),
      waitingTypes: WAITING_TYPES.map((w) => ({ value: w, label: w === 'instantly' ? 'At once' : `After some ${w}` })),
      switches: TRACKING_SWITCHES,
      relays,
    };
  };

  routes.get('/automations/:utr/steps/:step', editor, async (req, res) => {
    const data = await stepData(req);
    const s = data.step;
    const values = {
      subject: s.subject, sender_id: s.sender_id, template_id: s.template_id, waiting_type: s.waiting_type, waiting_period: s.waiting_period,
      template_html: s.template_html, template_json: s.template_json, track_opens: s.track_opens, track_clicks: s.track_clicks,
      relay_id: s.relay_id,
    };
    views.page(req, res, 'automations/step.njk', { ...data, values });
  });

  // The API's rules read the schedule's utr from the body: the step's own, from the path.
  routes.post('/automations/:utr/steps/:step', editor, onInvalid('automations/step.njk', stepData), async (req, _res, next) => {
    req.body.utr = String(req.params.step);
    next();
  }, withPreviewImage, validate(...scheduleFields()), async (req, res) => {
    await stepOf(req);
    await automationSchedules.update(ctxOf(req), String(req.params.step), scheduleInput(req.body), { editorDesign: true });
    views.redirect(res, `/automations/${utrOfPath(req)}`, 'Step saved. Messages not sent yet go out as edited.');
  });

  routes.post('/automations/:utr/steps/:step/test', onInvalid('automations/step.njk', stepData), validate(...testSendFields()), async (req, res) => {
    const { step } = await stepOf(req);
    const { addresses, contactId } = testSendInput(req.body);
    await services.testSends.automationStep(ctxOf(req), step.utr, addresses, contactId);
    views.redirect(res, `/automations/${utrOfPath(req)}/steps/${step.utr}`, `Test sent to ${addresses.join(', ')}. It is not counted in the statistics.`);
  });

  routes.post('/automations/:utr/steps/:step/delete', async (req, res) => {
    // The automation is looked up first: another account's automation is a 404.
    await automations.get(ctxOf(req), utrOfPath(req));
    await automationSchedules.remove(ctxOf(req), String(req.params.step));
    views.redirect(res, `/automations/${utrOfPath(req)}`, 'Step deleted.');
  });

  routes.post('/automations/:utr/duplicate', async (req, res) => {
    await automations.duplicate(ctxOf(req), utrOfPath(req));
    await views.changed(req, res, '/automations', 'Copy saved as a draft, with its steps.', () => listPage(req, res));
  });

  routes.post('/automations/:utr/delete', async (req, res) => {
    await automations.remove(ctxOf(req), utrOfPath(req));
    await views.changed(req, res, '/automations', 'Automation deleted.', () => listPage(req, res));
  });
}
