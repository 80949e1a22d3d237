import type { Request, Response } from 'express';
import { sendSuccess } from '../lib/envelope';
import { validate } from '../http/validation';
import type { Services } from '../services';
import type { ReportOf } from '../services/delivery/reports';
import { utrField, utrOf } from '../http/campaign-params';
import { ctxOf } from '../http/context';
import { listMessage, PAGING_PARAMS, pagingOf } from '../http/paging';
import { recipientReportFields, recipientReportInput, resendFields, resendInput } from '../http/inputs/send-follow-ups';
import { streamCsv } from '../http/stream';
import { csvFile, holds, lists, ref, SuccessDoc } from './describe';
import { int, uuid } from './schema-words';
import { ApiRoutes } from './routes';
import { sendStreamedList } from './stream-list';

/** The recipients list as JSON (paged like every list) or, with `format=csv`, the same rows as a CSV file. */
function recipientsDoc(): SuccessDoc {
  const json = lists('recipients', ref('SendRecipient'));
  const csv = csvFile('');
  return {
    description: `${json.description} With \`format=csv\`: a CSV file of the same columns.`,
    content: { ...json.content, ...csv.content },
  };
}

async function answerRecipients(services: Services, req: Request, res: Response, of: ReportOf, fileName: string): Promise<void> {
  const { recipientReport } = services;
  const { csv, ...filter } = recipientReportInput(req);
  if (csv) return streamCsv(res, fileName, recipientReport.csv(ctxOf(req), of, filter));
  const paging = pagingOf(req);
  if (paging) return sendSuccess(res, listMessage('recipients', await recipientReport.page(ctxOf(req), of, filter, paging)));
  await sendStreamedList(res, 'recipients', recipientReport.chunks(ctxOf(req), of, filter));
}

/**
 * Extensions on a single send's recipients: who it went to and what became of each message,
 * a retry of the failed ones, and a resend to those who did not open it.
 */
export function mountSendFollowUps(routes: ApiRoutes, services: Services): void {
  const { sendControls, resends } = services;

  routes.get('/single-send/recipients', { effect: 'exports', summary: 'List a single send\'s recipients with what became of each message (extension)', response: recipientsDoc(), params: PAGING_PARAMS }, validate(...recipientReportFields()), async (req, res) => {
    await answerRecipients(services, req, res, { singleSend: utrOf(req) }, `single-send-recipients-${utrOf(req)}.csv`);
  });

  routes.get('/single/send/retry-failed', { effect: 'changes', summary: 'Queue a single send\'s failed messages again (extension)', response: holds({ retried: int }, '`message.retried`: how many failed messages were queued again.') }, validate(utrField()), async (req, res) => {
    sendSuccess(res, { retried: await sendControls.retryFailed(ctxOf(req), utrOf(req)) });
  });

  routes.post('/single/send/resend', { summary: 'Resend a completed single send to those who did not open it (extension)', response: holds({ utr: uuid }, '`message.utr`: the new single send\'s.') }, validate(...resendFields()), async (req, res) => {
    sendSuccess(res, { utr: await resends.resend(ctxOf(req), utrOf(req), resendInput(req.body)) });
  });
}

/** Extension: the recipients of one automation email (step), by the email's utr. */
export function mountStepRecipients(routes: ApiRoutes, services: Services): void {
  routes.get('/automations/schedule/recipients', { effect: 'exports', summary: 'List an automation email\'s recipients with what became of each message (extension; utr is the email\'s)', response: recipientsDoc(), params: PAGING_PARAMS }, validate(...recipientReportFields()), async (req, res) => {
    await answerRecipients(services, req, res, { step: utrOf(req) }, `automation-email-recipients-${utrOf(req)}.csv`);
  });
}
