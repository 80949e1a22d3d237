import type { Request } from 'express';
import { ctxOf } from '../http/context';
import { resendChoiceFields, resendInput } from '../http/inputs/send-follow-ups';
import { streamCsv } from '../http/stream';
import { validate } from '../http/validation';
import { RECIPIENT_STATUSES, RecipientStatus } from '../lib/constants';
import type { Services } from '../services';
import { onInvalid } from './errors';
import type { WebRoutes } from './routes';
import type { Views } from './views';

/** A recipients filter of the dashboard (`?status=failed`); anything else is everyone. */
export function recipientFilterOf(req: Request): RecipientStatus | undefined {
  const asked = typeof req.query.status === 'string' ? req.query.status : '';
  return (RECIPIENT_STATUSES as readonly string[]).includes(asked) ? (asked as RecipientStatus) : undefined;
}

/**
 * What a sent single send's page offers beyond its statistics: retry its failed messages, resend
 * it to those who did not open it (the count shown before anything is made), and download who it
 * went to. Over the same services as the API's `/single/send/retry-failed`, `/single/send/resend`
 * and `/single-send/recipients`.
 */
export function mountSendFollowUps(routes: WebRoutes, services: Services, views: Views): void {
  const { singleSends, sendControls, resends, recipientReport } = services;

  routes.post('/single-sends/:utr/retry-failed', async (req, res) => {
    const utr = String(req.params.utr);
    const retried = await sendControls.retryFailed(ctxOf(req), utr);
    const flash = retried === 0
      ? 'Nothing to retry: the failed messages left are to addresses that unsubscribed or were suppressed since, or may have arrived already.'
      : `${retried} failed ${retried === 1 ? 'message is' : 'messages are'} being sent again.`;
    views.redirect(res, `/single-sends/${utr}`, flash);
  });

  const resendData = async (req: Request) => {
    const ctx = ctxOf(req);
    const send = await singleSends.get(ctx, String(req.params.utr));
    const count = await resends.nonOpenerCount(ctx, send.utr);
    return { title: `Resend “${send.single_send_name}” to non-openers`, send, count };
  };

  routes.get('/single-sends/:utr/resend', async (req, res) => {
    const [data, subject] = await Promise.all([resendData(req), resends.proposedSubject(ctxOf(req), String(req.params.utr))]);
    views.page(req, res, 'single-sends/resend.njk', { ...data, values: { subject, schedule_type: '0' } });
  });

  // "Send now" posts schedule_type 0; "Save as a draft" posts none, so the resend waits for its confirm step.
  routes.post('/single-sends/:utr/resend', onInvalid('single-sends/resend.njk', resendData), validate(...resendChoiceFields()), async (req, res) => {
    const body = { ...req.body, schedule_type: req.body.when === 'now' ? 0 : undefined };
    const utr = await resends.resend(ctxOf(req), String(req.params.utr), resendInput(body));
    views.redirect(res, `/single-sends/${utr}`, req.body.when === 'now'
      ? 'Resend started: it goes to those who had not opened the message.'
      : 'Resend saved as a draft: nothing goes out before you confirm.');
  });

  // Everyone the send went to with what became of each message, or only those of one status.
  routes.download('/single-sends/:utr/recipients.csv', async (req, res) => {
    const utr = String(req.params.utr);
    const status = recipientFilterOf(req);
    await streamCsv(res, `recipients-${utr}${status ? `-${status}` : ''}.csv`, recipientReport.csv(ctxOf(req), { singleSend: utr }, status, { timeZone: req.account!.time_zone }));
  });
}
