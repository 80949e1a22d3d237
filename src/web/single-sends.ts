import type { Request, Response } from 'express';
import { ctxOf } from '../http/context';
import { singleSendFields, singleSendInput, testSendFields, testSendInput } from '../http/inputs/single-sends';
import { RECIPIENT_STATUSES, RecipientStatus, SINGLE_SEND_STATUS } from '../lib/constants';
import { SCHEDULE_LOCAL_TIME } from '../lib/zoned-time';
import { toId } from '../lib/http';
import { field, validate } from '../http/validation';
import type { Services } from '../services';
import type { AuditRecord } from '../services/accounts/audit-log';
import { formatRecipientRef, type RecipientRef } from '../services/campaigns/campaign-refs';
import { SINGLE_SEND_EDITABLE } from '../services/shared/single-send-state';
import type { OpenBucket } from '../services/campaigns/send-insights';
import type { SingleSendRecord } from '../services/campaigns/single-sends';
import type { Config } from '../config';
import { designerChoices, editorPage } from './editor';
import { engagementOf } from './engagement';
import { onInvalid } from './errors';
import { presentAbTest } from './ab-tests';
import { recipientFilterOf } from './send-follow-ups';
import { relayChoices } from './relays';
import { checkboxFields, listFields } from './forms';
import { MESSAGE_CSP } from './outbox';
import { Pager, pagerOf, pagingOf } from './paging';
import { TRACKING_SWITCHES } from './settings';
import { withSendStatus } from './statuses';
import type { WebRoutes } from './routes';
import type { Views } from './views';
import { providerPanel } from './provider-figures';

const LIST = { 'single-send-list': 'single-sends/macros.njk#list' } as const;
const STATS = { 'send-stats': 'single-sends/macros.njk#stats' } as const;

const DRAFT_SAVED = 'Draft saved. Send yourself a test, then send it or schedule it: nothing goes out before you confirm.';
const CANCEL = { action: 'cancel', label: 'Cancel send', danger: true, confirm: 'Cancel this send? Messages not sent yet will never be sent; this cannot be undone.' };
/** The buttons a send's page offers in each status (`/single/send/pause|resume|cancel`). */
const CONTROLS: Record<number, Array<{ action: string; label: string; danger?: boolean; confirm?: string }>> = {
  [SINGLE_SEND_STATUS.ready]: [{ action: 'pause', label: 'Pause' }, CANCEL],
  [SINGLE_SEND_STATUS.running]: [{ action: 'pause', label: 'Pause' }, CANCEL],
  [SINGLE_SEND_STATUS.paused]: [{ action: 'resume', label: 'Resume' }, CANCEL],
};
const CONTROL_DONE: Record<string, string> = {
  pause: 'Paused: nothing more is sent until you resume. Messages already on their way finish.',
  resume: 'Resumed: sending continues where it stopped.',
  cancel: 'Cancelled: messages not sent yet will never be sent.',
};

/** What the list and detail pages show beside the stored record. */
function present(send: SingleSendRecord) {
  const editable = SINGLE_SEND_EDITABLE.includes(send.status);
  // A ready send due at once, or a running one, changes by itself: its page polls.
  const live = send.status === SINGLE_SEND_STATUS.running || (send.status === SINGLE_SEND_STATUS.ready && send.schedule_type === 0);
  return { ...withSendStatus(send), editable, live, controls: CONTROLS[send.status] ?? [] };
}

/** The opens-over-time chart's columns, labelled in the page's time zone by the view. */
function opensChart({ unit, buckets }: { unit: 'hour' | 'day'; buckets: OpenBucket[] }) {
  return { unit, columns: buckets.map((b) => ({ at: `${b.start}:00:00Z`, value: b.opens })) };
}

/** Single sends: a composer, a list, and a page with live counters, over the same service as `/single/send/*`. */
/** How many bounced addresses a send's page lists (its CSV download has every one). */
const BOUNCES_SHOWN = 20;
const RECIPIENTS_PER_PAGE = 25;

/** What each recipient status says on the send's page. */
const RECIPIENT_STATUS_LABELS: Record<RecipientStatus, string> = {
  queued: 'Waiting to be sent',
  delivered: 'Delivered',
  opened: 'Opened',
  clicked: 'Clicked a link',
  bounced: 'Bounced',
  failed: 'Failed',
  unsubscribed: 'Unsubscribed',
  complained: 'Marked as spam',
  skipped: 'Not sent',
};

/** The pager's links land on the recipients table, not the top of the send's page. */
function atRecipients(pager: Pager): Pager {
  const at = (href?: string) => (href ? `${href}#recipients` : undefined);
  return { ...pager, prev: at(pager.prev), next: at(pager.next), first: at(pager.first), last: at(pager.last) };
}

export function mountSingleSends(routes: WebRoutes, services: Services, views: Views, config: Config): void {
  const { singleSends, senders, unsubscribeGroups, designTemplates, contactTypes, contacts, segments, sendInsights } = services;
  const editor = editorPage(config);

  /** The choices of the composer: senders, groups, templates and audiences of the account. */
  const choices = async (req: Request) => {
    const ctx = ctxOf(req);
    const [senderList, groups, templates, types, segmentList, designer, relays] = await Promise.all([
      senders.list(ctx),
      unsubscribeGroups.list(ctx),
      designTemplates.list(),
      contactTypes.list(ctx),
      segments.list(ctx),
      designerChoices(services, req),
      relayChoices(services.relays, req),
    ]);
    return {
      senders: senderList.rows,
      relays,
      groups: groups.rows,
      templates: templates.rows.map((t) => ({ id: t.id, name: t.template_name, image: `/templates/${encodeURIComponent(t.preview_image)}` })),
      audiences: [
        ...types.rows.map((t) => ({ ref: `contacts_${t.id}`, label: t.name, note: `${t.contacts_count ?? 0} contacts` })),
        ...segmentList.rows.map((g) => ({ ref: `segments_${g.id}`, label: `Segment: ${g.segment_name}`, note: `${g.segment_emails_count} recipients` })),
      ],
      ...designer,
      switches: TRACKING_SWITCHES,
    };
  };
  const newForm = async (req: Request) => ({ title: 'New single send', action: '/single-sends/new', ...(await choices(req)) });
  const editForm = async (req: Request) => {
    const send = await singleSends.get(ctxOf(req), String(req.params.utr));
    return { title: `Edit ${send.single_send_name}`, action: `/single-sends/${send.utr}/edit`, send, ...(await choices(req)) };
  };
  /** The stored record as the form's values (recipient refs back to `contacts_1` strings). */
  const formValues = (send: SingleSendRecord) => ({
    ...send,
    recipient_id: send.recipient_id.map((ref: RecipientRef) => formatRecipientRef(ref)),
    exclude_specific_recipient_id: send.exclude_specific_recipient_id.map((ref: RecipientRef) => formatRecipientRef(ref)),
    schedule_date: send.schedule_type ? send.schedule_date : '',
    schedule_time: send.schedule_type ? send.schedule_time.slice(0, 5) : '',
  });
  const listPage = async (req: Request, res: Response) => {
    const result = await singleSends.list(ctxOf(req), pagingOf(req));
    views.page(req, res, 'single-sends/index.njk', { title: 'Single sends', sends: result.rows.map(present), pager: pagerOf(req, result, '/single-sends') }, { fragments: LIST });
  };

  routes.get('/single-sends', listPage);

  routes.get('/single-sends/new', editor, async (req, res) => {
    const form = await newForm(req);
    const blank = (await designTemplates.list()).rows.find((t) => t.is_blank === 1);
    const { track_opens, track_clicks } = req.account!;
    views.page(req, res, 'single-sends/form.njk', { ...form, values: { schedule_type: '0', template_id: blank?.id, template_html: blank?.html_code ?? '', track_opens, track_clicks } });
  });

  const recipientLists = [listFields('recipient_id', 'exclude_specific_recipient_id'), checkboxFields('archive')];

  routes.post('/single-sends/new', editor, onInvalid('single-sends/form.njk', newForm), ...recipientLists, validate(...singleSendFields({ preheader: 'optional' })), async (req, res) => {
    const utr = await singleSends.create(ctxOf(req), singleSendInput(req.body), { draft: true, editorDesign: true });
    views.redirect(res, `/single-sends/${utr}`, DRAFT_SAVED);
  });

  // The body editor, filled with a template's HTML when another template is picked.
  routes.get('/single-sends/template-body', async (req, res) => {
    const template = await designTemplates.get(toId(req.query.template_id) ?? 0);
    views.fragment(res, 'single-sends/macros.njk#body', { values: { template_html: template.html_code } });
  });

  const showData = async (req: Request) => {
    const ctx = ctxOf(req);
    const send = await singleSends.get(ctx, String(req.params.utr));
    const counts = {
      delivered: send.delivered, uniqueOpens: send.unique_opens, totalOpens: send.total_opens, uniqueClicks: send.unique_clicks,
      totalClicks: send.total_clicks, unsubscribes: send.unsubscribes, bounces: send.bounces,
    };
    const started = send.status >= SINGLE_SEND_STATUS.running;
    const onLocalClock = send.schedule_type === SCHEDULE_LOCAL_TIME && started;
    const shown = recipientFilterOf(req);
    const [types, segmentList, opens, failures, engagement, waiting, abTest, history, bounced, whoGot, pause, byProvider] = await Promise.all([
      contactTypes.list(ctx),
      segments.list(ctx),
      sendInsights.opensOverTime(ctx, send.id),
      // Only asked for when something failed, so a healthy send's page costs no extra round trip.
      send.failed > 0 ? sendInsights.failures(ctx, send.id) : [],
      started ? engagementOf(services, req, { singleSendId: send.id }, counts, { opens: false }) : undefined,
      onLocalClock ? sendInsights.waitingForLocalTime(ctx, send.id) : undefined,
      send.ab ? services.abTests.details(send.id).then(presentAbTest) : null,
      services.auditLog.ofRecord(ctx, 'single_send', send.utr, SEND_HISTORY),
      // The addresses that bounced with the mail system's reason, newest first (the CSV has all).
      send.bounces > 0 ? services.recipientReport.page(ctx, { singleSend: send.utr }, 'bounced', { page: 1, perPage: BOUNCES_SHOWN }).then((r) => r.rows) : [],
      // Who it went to, one page, filtered as the API's recipients report: "who failed and why" without a file.
      started ? services.recipientReport.page(ctx, { singleSend: send.utr }, shown, pagingOf(req, RECIPIENTS_PER_PAGE)) : undefined,
      // A paused send says why, what to fix and how to go on.
      send.status === SINGLE_SEND_STATUS.paused ? sendInsights.pauseOf(ctx, send.id) : undefined,
      started ? services.providerFigures.ofSingleSend(ctx, send.utr).then((figures) => providerPanel(services, figures, req.account!.time_zone)) : undefined,
    ]);
    const names = new Map([
      ...types.rows.map((t): [string, string] => [`contacts_${t.id}`, t.name]),
      ...segmentList.rows.map((g): [string, string] => [`segments_${g.id}`, `Segment: ${g.segment_name}`]),
    ]);
    const label = (ref: RecipientRef) => names.get(formatRecipientRef(ref)) ?? formatRecipientRef(ref);
    return {
      title: send.single_send_name,
      send: present(send),
      opens: opensChart(opens),
      failures,
      bounced,
      byProvider,
      engagement,
      waiting,
      abTest,
      who: whoOf(history),
      pause: pause && { ...pause, domain: pause.domain && { ...pause.domain, failing: pause.domain.records.filter((r) => r.status !== 'ok') } },
      recipientList: whoGot && {
        rows: whoGot.rows.map((r) => ({ ...r, statusLabel: RECIPIENT_STATUS_LABELS[r.status] })),
        status: shown ?? '',
        statuses: RECIPIENT_STATUSES.map((value) => ({ value, label: RECIPIENT_STATUS_LABELS[value] })),
        pager: atRecipients(pagerOf(req, whoGot, `/single-sends/${send.utr}`)),
      },
      recipients: send.recipient_id.map(label),
      excluded: send.exclude_specific_recipient_id.map(label),
    };
  };

  routes.get('/single-sends/:utr', async (req, res) => {
    views.page(req, res, 'single-sends/show.njk', await showData(req), { fragments: STATS });
  });

  routes.post('/single-sends/:utr/test', onInvalid('single-sends/show.njk', showData), validate(...testSendFields()), async (req, res) => {
    const { addresses, contactId } = testSendInput(req.body);
    await services.testSends.singleSend(ctxOf(req), String(req.params.utr), addresses, contactId);
    views.redirect(res, `/single-sends/${String(req.params.utr)}`, `Test sent to ${addresses.join(', ')}. It is not counted in the statistics.`);
  });

  // The preview for a contact found by name or email (the first match; the others to pick from).
  // Confirm before sending, so a send never leaves by a slip: the number of recipients, then one button.
  const whenOf = (req: Request) => (String(req.query.when ?? req.body?.when) === 'schedule' ? 'schedule' : 'now');
  routes.get('/single-sends/:utr/confirm', async (req, res) => {
    const ctx = ctxOf(req);
    const send = present(await singleSends.get(ctx, String(req.params.utr)));
    if (send.status !== SINGLE_SEND_STATUS.initiate) return views.redirect(res, `/single-sends/${send.utr}`);
    const now = new Date();
    const [count, empty, domainStatus, route, plan] = await Promise.all([
      services.sendControls.recipientCount(ctx, send.utr),
      services.designEditor.emptyPlaceholders(ctx, send.utr),
      services.sendControls.senderDomainStatus(ctx, send.utr),
      services.relays.routeOf(ctx, send.from_sender, send.relay_id),
      // On each recipient's clock: who has no zone, and when the first and last messages go.
      services.sendControls.localTimePlan(ctx, send.utr, now),
    ]);
    const localTime = plan && { ...plan, firstAtOnce: plan.first !== null && Date.parse(plan.first) <= now.getTime() };
    views.page(req, res, 'single-sends/confirm.njk', { title: `Send ${send.single_send_name}`, send, count, empty, domainStatus, route, localTime, when: whenOf(req) });
  });
  routes.post('/single-sends/:utr/confirm', async (req, res) => {
    const utr = String(req.params.utr);
    const when = whenOf(req);
    await services.sendControls.confirm(ctxOf(req), utr, when);
    views.redirect(res, `/single-sends/${utr}`, when === 'now' ? 'Sending has started.' : 'Scheduled. You can pause or cancel it until it starts.');
  });

  for (const action of ['pause', 'resume', 'cancel'] as const) {
    routes.post(`/single-sends/:utr/${action}`, async (req, res) => {
      await services.sendControls[action](ctxOf(req), String(req.params.utr));
      views.redirect(res, `/single-sends/${String(req.params.utr)}`, CONTROL_DONE[action]);
    });
  }

  routes.get('/single-sends/:utr/recipient-preview', async (req, res) => {
    const ctx = ctxOf(req);
    const send = await singleSends.get(ctx, String(req.params.utr));
    const search = typeof req.query.search === 'string' ? req.query.search.trim() : '';
    const chosen = toId(req.query.contact_id);
    const matches = search ? (await contacts.listPage(ctx, { page: 1, perPage: 5 }, search)).rows : [];
    const contactId = chosen ?? matches[0]?.id;
    const message = await sendInsights.preview(ctx, send.utr, contactId);
    views.fragment(res, 'single-sends/macros.njk#preview', { send, search, matches, contactId, message });
  });

  routes.get('/single-sends/:utr/edit', editor, async (req, res) => {
    const form = await editForm(req);
    views.page(req, res, 'single-sends/form.njk', { ...form, values: formValues(form.send) });
  });

  routes.post('/single-sends/:utr/edit', editor, onInvalid('single-sends/form.njk', editForm), ...recipientLists, validate(...singleSendFields({ preheader: 'optional' })), async (req, res) => {
    const utr = await singleSends.update(ctxOf(req), String(req.params.utr), singleSendInput(req.body), { draft: true, editorDesign: true });
    views.redirect(res, `/single-sends/${utr}`, DRAFT_SAVED);
  });

  // The message as the sending engine renders it for a contact of the account (or for nobody:
  // placeholders empty), shown in a sandboxed frame.
  routes.get('/single-sends/:utr/preview', async (req, res) => {
    const { html } = await sendInsights.preview(ctxOf(req), String(req.params.utr), toId(req.query.contact_id));
    res.set({ 'Content-Security-Policy': MESSAGE_CSP, 'X-Frame-Options': 'SAMEORIGIN', 'Cache-Control': 'no-store' });
    res.type('html').send(html);
  });

  routes.post('/single-sends/:utr/archive', validate(field('archive').required().boolean()), async (req, res) => {
    const shown = req.body.archive === '1';
    await singleSends.setArchive(ctxOf(req), String(req.params.utr), shown ? 1 : 0);
    views.redirect(res, `/single-sends/${String(req.params.utr)}`, shown ? 'It is shown in your public archive once sent.' : 'It is no longer shown in your public archive.');
  });

  routes.post('/single-sends/:utr/duplicate', async (req, res) => {
    await singleSends.duplicate(ctxOf(req), String(req.params.utr));
    await views.changed(req, res, '/single-sends', 'Copy saved as a draft: edit it to send it.', () => listPage(req, res));
  });

  routes.post('/single-sends/:utr/delete', async (req, res) => {
    await singleSends.remove(ctxOf(req), String(req.params.utr));
    await views.changed(req, res, '/single-sends', 'Single send deleted; it will not be sent.', () => listPage(req, res));
  });
}

/** What a send's page says of who made it and who sent it on its way (from the audit log). */
const SEND_HISTORY = ['single_send.created', 'single_send.started', 'single_send.scheduled', 'single_send.paused'] as const;

function whoOf(history: AuditRecord[]) {
  const name = (e: AuditRecord) => (e.actor.type === 'system' ? 'the service' : e.actor.type === 'api_key' ? `${e.actor.name} (API key)` : e.actor.name);
  const latest = (...actions: string[]) => [...history].reverse().find((e) => actions.includes(e.action));
  const created = history.find((e) => e.action === 'single_send.created');
  const started = latest('single_send.started', 'single_send.scheduled');
  const paused = latest('single_send.paused');
  return {
    created: created && { name: name(created), at: created.created_at },
    started: started && { name: name(started), at: started.created_at, scheduled: started.action === 'single_send.scheduled' },
    paused: paused && { name: name(paused), at: paused.created_at, system: paused.actor.type === 'system' },
  };
}
