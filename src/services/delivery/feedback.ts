import { createSigner, TOKEN_PURPOSE } from '../../lib/signed-token';
import { createBounceTokens } from '../../lib/verp';
import { Feedback, FeedbackResult, recordFeedback } from './record-feedback';
import type { ServiceDeps } from '../context';
import { checkSendRates } from './rate-alerts';
import type { EventsService } from './events';

/** A report before it is matched to a message: which message it names, and what happened. */
export type Report = DistributiveOmit<Feedback, 'messageId'>;
type DistributiveOmit<T, K extends keyof never> = T extends unknown ? Omit<T, K> : never;

/**
 * Bounces and complaints from every channel (the inbound SMTP listener, the IMAP mailbox,
 * provider webhooks) enter here. A report is matched only through a signed token the service
 * wrote into the message (the VERP address, `X-Campaign-Message`, or its Message-ID), never by
 * address alone, so nobody can suppress an address by naming it.
 */
export function createFeedbackService({ db, config, secret, logger, events }: Pick<ServiceDeps, 'db' | 'config' | 'secret' | 'logger'> & { events: EventsService }) {
  const tokens = createBounceTokens(secret);
  const signer = createSigner(secret);
  return {
    /** The ledger id named by a VERP / X-Campaign-Message token, or undefined. */
    messageOfToken(token: string | undefined): number | undefined {
      return token ? tokens.verify(token) : undefined;
    },

    /** The ledger id named by a Message-ID the service wrote (`<token@host>`), or undefined. */
    messageOfMessageId(messageId: string | undefined): number | undefined {
      const match = /^\s*<?([^@<>\s]+)@[^<>\s]+>?\s*$/.exec(messageId ?? '');
      return match ? signer.verify(TOKEN_PURPOSE.messageId, match[1]) : undefined;
    },

    async record(messageId: number, report: Report, now = new Date()): Promise<FeedbackResult> {
      const result = await recordFeedback(db, { ...report, messageId } as Feedback, {
        now,
        softBounceLimit: config.softBounceLimit,
        onRecorded: (sendId, trx) => checkSendRates(trx, sendId, now.toISOString(), async (alert) => void (await events.sendRateAlert(alert, trx))),
      });
      logger.info({ messageId, event: report.event, source: report.source, result: result.result }, 'delivery feedback');
      return result;
    },
  };
}

export type FeedbackService = ReturnType<typeof createFeedbackService>;
