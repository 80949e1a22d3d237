import express, { ErrorRequestHandler, Request, Response, Router } from 'express';
import type { Logger } from 'pino';
import { sendFailure, sendSuccess } from '../lib/envelope';
import type { Services } from '../services';
import type { WebhookResult } from '../services/delivery/feedback';

const MAX_WEBHOOK_BYTES = 1024 * 1024;

/**
 * The public provider webhooks (no API keys: each provider authenticates its own way, checked
 * in services.webhooks). Bodies are read raw: SendGrid signs the exact bytes, and SNS posts
 * JSON as text/plain.
 */
export function createWebhookRouter(services: Services, logger: Logger): Router {
  const router = express.Router();
  const raw = express.raw({ type: () => true, limit: MAX_WEBHOOK_BYTES });
  const bodyOf = (req: Request) => (Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));
  const answer = (res: Response, result: WebhookResult) => {
    if (result.status === 200) return sendSuccess(res, { received: result.counts });
    if (result.status === 401) res.setHeader('WWW-Authenticate', 'Basic realm="webhooks"');
    sendFailure(res, result.status, result.error ?? 'Failed');
  };

  router.post('/webhooks/ses', raw, async (req, res) => answer(res, await services.webhooks.ses(bodyOf(req))));
  router.post('/webhooks/sendgrid', raw, async (req, res) =>
    answer(res, await services.webhooks.sendgrid(bodyOf(req), req.get('X-Twilio-Email-Event-Webhook-Signature'), req.get('X-Twilio-Email-Event-Webhook-Timestamp'))));
  router.post('/webhooks/postmark', raw, async (req, res) => answer(res, await services.webhooks.postmark(req.get('Authorization'), bodyOf(req))));
  router.post('/webhooks/mailgun', raw, async (req, res) => answer(res, await services.webhooks.mailgun(bodyOf(req))));

  const errors: ErrorRequestHandler = (err, _req, res, _next) => {
    const status = Number((err as { status?: number }).status);
    if (status === 413) return sendFailure(res, 413, 'The body is too large.');
    if (status === 400) return sendFailure(res, 400, 'The body could not be read.');
    logger.error({ err }, 'webhook failed');
    sendFailure(res, 500, 'Internal Server Error');
  };
  router.use('/webhooks', errors);
  return router;
}
