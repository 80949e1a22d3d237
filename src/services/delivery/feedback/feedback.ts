import { createSigner, TOKEN_PURPOSE } from '../../../lib/signed-token';
import type { Reading } from '../../../mail/bounce-reader';
import { createBounceTokens } from '../../../lib/verp';
import { RETURN_PATH_LABEL } from '../../../lib/constants';
import { Feedback, FeedbackResult, recordFeedback } from './record-feedback';
import type { ServiceDeps } from '../../context';
import { checkSendRates } from '../notices';
import { instanceBounceList } from '../ledger';
import type { EventsService } from '../notices';

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
  const instanceBounces = config.deliverability.instanceBounceList ? instanceBounceList(secret) : undefined;
  const signer = createSigner(secret);
  const messageOfToken = (token: string | undefined): number | undefined => (token ? tokens.verify(token) : undefined);
  const messageOfMessageId = (messageId: string | undefined): number | undefined => {
    const match = /^\s*<?([^@<>\s]+)@[^<>\s]+>?\s*$/.exec(messageId ?? '');
    return match ? signer.verify(TOKEN_PURPOSE.messageId, match[1]) : undefined;
  };
  async function record(messageId: number, report: Report, now = new Date()): Promise<FeedbackResult> {
    const result = await recordFeedback(db, { ...report, messageId } as Feedback, {
      now,
      softBounceLimit: config.softBounceLimit,
      instanceBounces,
      onRecorded: (sendId, trx) => checkSendRates(trx, sendId, now.toISOString(), async (alert) => void (await events.sendRateAlert(alert, trx))),
      onPolicyPause: async (pause, trx) => void (await events.sendPausedForPolicy(pause, trx)),
    });
    logger.info({ messageId, event: report.event, source: report.source, result: result.result }, 'delivery feedback');
    return result;
  }

  return {
    /** The ledger id named by a VERP / X-Campaign-Message token, or undefined. */
    messageOfToken,

    /** The ledger id named by a Message-ID the service wrote (`<token@host>`), or undefined. */
    messageOfMessageId,

    /**
     * Whether `host` is the bounce subdomain (`bounces.<domain>`) of one of the sending domains
     * of the account that sent message `messageId`: the other host, besides BOUNCE_DOMAIN, that
     * its VERP address may be at (see feedbackStamp).
     */
    async isReturnPathOf(messageId: number, host: string): Promise<boolean> {
      const domain = host.toLowerCase().slice(`${RETURN_PATH_LABEL}.`.length);
      if (!host.toLowerCase().startsWith(`${RETURN_PATH_LABEL}.`) || !domain) return false;
      const row = await db('sending_domains as d')
        .join('send_messages as m', 'm.user_id', 'd.user_id')
        .where({ 'm.id': messageId, 'd.domain': domain })
        .first('d.id');
      return Boolean(row);
    },

    /**
     * The ledger id of the message a provider's API answered this id for (its relays store it), or
     * undefined. Only an id the provider gave us matches, so it cannot be guessed from an address.
     */
    async messageOfProviderId(providerId: string): Promise<number | undefined> {
      const bare = providerId.trim().replace(/^<|>$/g, '').slice(0, 253);
      if (!bare) return undefined;
      const row = await db('send_messages').whereIn('provider_message_id', [bare, `<${bare}>`]).first('id');
      return row ? Number(row.id) : undefined;
    },

    /**
     * The ledger id a returned report is about: the returned original's X-Campaign-Message,
     * else its Message-ID, else a VERP address the report shows; undefined when none is ours.
     */
    messageOfReading(reading: Pick<Reading, 'token' | 'named'>): number | undefined {
      return messageOfToken(reading.named?.token) ?? messageOfMessageId(reading.named?.messageId) ?? messageOfToken(reading.token);
    },

    /**
     * The message a report that came to `envelopeId`'s VERP address is charged to: the one the
     * report is about (`namedId`) when it is a message of the same account, else the envelope's,
     * never a message of another account.
     */
    async chargedMessage(envelopeId: number, namedId: number | undefined): Promise<number> {
      if (namedId === undefined || namedId === envelopeId) return envelopeId;
      const rows: Array<{ id: number; user_id: number }> = await db('send_messages').whereIn('id', [envelopeId, namedId]).select('id', 'user_id');
      const owner = (id: number) => rows.find((r) => Number(r.id) === id)?.user_id;
      const named = owner(namedId);
      return named !== undefined && Number(named) === Number(owner(envelopeId)) ? namedId : envelopeId;
    },

    record,

    /**
     * Records what a returned message says about ledger message `id` (the message it is about, as
     * the listener or the mailbox matched it). Auto-replies and reports of no failure are ignored.
     */
    async recordReading(id: number, reading: Reading, channel: 'dsn' | 'imap'): Promise<'recorded' | 'duplicate' | 'ignored' | 'unrecognised'> {
      let result: FeedbackResult;
      if (reading.kind === 'bounce') {
        result = await record(id, {
          event: 'bounce',
          permanent: reading.permanent,
          ...(reading.status ? { status: reading.status } : {}),
          diagnostic: reading.diagnostic,
          source: channel,
        });
      } else if (reading.kind === 'complaint') {
        result = await record(id, { event: 'complaint', diagnostic: reading.diagnostic, source: channel === 'dsn' ? 'arf' : channel });
      } else {
        return reading.kind === 'unrecognised' ? 'unrecognised' : 'ignored';
      }
      return result.result === 'unknown' ? 'unrecognised' : result.result;
    },
  };
}

export type FeedbackService = ReturnType<typeof createFeedbackService>;
