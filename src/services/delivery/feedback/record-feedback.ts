import type { Knex } from 'knex';
import { forUpdate } from '../../../db/locking';
import { FEEDBACK_EVENT, SOFT_BOUNCE_WINDOW_MS } from '../../../lib/constants';
import { countUnsubscribe, moveCounters } from '../ledger';
import { transitionMessages } from '../../shared/message-state';
import { suppressAddress } from '../ledger';
import { addUnsubscribers } from '../../shared/unsubscribers';
import { emitMessageEvents } from '../../integrations/hook-outbox';
import { isPolicyRefusal } from '../../../mail/relay-transports';
import { listInstanceBounce, pauseForPolicy, type InstanceBounceList, type PolicyPause } from '../ledger';
import { bounceClass } from '../../../lib/bounce-class';

/** What came back about one sent message, from whichever channel (DSN, ARF, a provider's webhook). */
export type Feedback =
  | {
      messageId: number;
      event: typeof FEEDBACK_EVENT.bounce;
      /** 5.x.x or the provider's permanent type; false for 4.x.x / transient. */
      permanent: boolean;
      /** The enhanced status code (RFC 3463) when known, e.g. 5.1.1. */
      status?: string;
      diagnostic: string;
      source: string;
    }
  | { messageId: number; event: typeof FEEDBACK_EVENT.complaint; diagnostic: string; source: string };

export interface FeedbackPolicy {
  now: Date;
  /** Soft bounces of an address within 30 days that suppress it. */
  softBounceLimit: number;
  /** The instance's bounce list, when it is kept (INSTANCE_BOUNCE_LIST): hard bounces are added to it. */
  instanceBounces?: InstanceBounceList;
  /** Called inside the transaction after an event of a single send's message was recorded (rate alerts). */
  onRecorded?(sendId: number, trx: Knex.Transaction): Promise<void>;
  /** Called inside the transaction that paused a send for its policy refusals (once per send). */
  onPolicyPause?(pause: PolicyPause, trx: Knex.Transaction): Promise<void>;
}

/** `recorded`; `duplicate`: this event of this message was recorded before; `unknown`: no such message. */
export type FeedbackResult = { result: 'recorded'; singleSendId: number | null } | { result: 'duplicate' | 'unknown' };

interface MessageRow {
  id: number;
  user_id: number;
  email: string;
  email_key: string;
  state: number;
  single_send_id: number | null;
  automation_id: number | null;
}

/**
 * Records a bounce or complaint of a ledger message in one transaction with everything it moves:
 * - a bounce of a message counted as delivered moves it to bounced (`delivered` − 1, `bounces` + 1,
 *   and the automation's totals); a message already refused at SMTP time is not counted again;
 * - a bounce that is a policy refusal (isPolicyRefusal, the reading SMTP answers get) is the
 *   sender's problem, not the address's: the message fails with reason `policy` (`delivered` − 1,
 *   `failed` + 1), nobody is suppressed, and its send pauses as it would at SMTP time;
 * - a hard bounce suppresses the address for the account at once, a soft one once the address
 *   has SOFT_BOUNCE_LIMIT soft bounces within 30 days;
 * - a complaint puts the address on the global unsubscribe list, counts once in the send's
 *   `unsubscribes` and suppresses it.
 * Each event of a message counts once however often it arrives (unique message_id, event).
 */
export async function recordFeedback(db: Knex, f: Feedback, policy: FeedbackPolicy): Promise<FeedbackResult> {
  const now = policy.now.toISOString();
  const refusedByPolicy = f.event === FEEDBACK_EVENT.bounce && isPolicyRefusal(`${f.status ?? ''} ${f.diagnostic}`);
  const event = refusedByPolicy ? FEEDBACK_EVENT.policy : f.event;
  return db.transaction(async (trx) => {
    const message: MessageRow | undefined = await trx('send_messages')
      .where({ id: f.messageId })
      .first('id', 'user_id', 'email', 'email_key', 'state', 'single_send_id', 'automation_id');
    if (!message) return { result: 'unknown' as const };
    const userId = Number(message.user_id);
    const inserted = await trx('message_feedback')
      .insert({
        user_id: userId,
        message_id: message.id,
        email_key: message.email_key,
        event,
        permanent: f.event === FEEDBACK_EVENT.complaint || f.permanent ? 1 : 0,
        status: f.event === FEEDBACK_EVENT.bounce ? (f.status ?? null) : null,
        diagnostic: f.diagnostic.slice(0, 500),
        source: f.source,
        created_at: now,
      })
      .onConflict(['message_id', 'event'])
      .ignore()
      .returning('id');
    if (!inserted.length) return { result: 'duplicate' as const };

    // The same lock order as recordOutcomes: the ledger row (written above), then sends, then automations.
    const sendId = message.single_send_id === null ? null : Number(message.single_send_id);
    const automationId = message.automation_id === null ? null : Number(message.automation_id);
    if (sendId) await forUpdate(trx, trx('single_sends').where({ id: sendId }).select('id'));
    if (automationId) await forUpdate(trx, trx('automations').where({ id: automationId }).select('id'));
    const klass = f.event === FEEDBACK_EVENT.bounce ? bounceClass(f.status, f.diagnostic) : null;
    const suppression = { userId, email: message.email, emailKey: message.email_key, diagnostic: f.diagnostic, source: f.source, now, bounceClass: klass };

    if (refusedByPolicy) {
      const patch = { failure_reason: 'policy', last_error: f.diagnostic.slice(0, 500), bounce_class: 'policy', updated_at: now };
      if (await transitionMessages(trx('send_messages').where({ id: message.id }), 'refuseAfterDelivery', patch)) {
        await moveCounters(trx, message, { delivered: -1, failed: 1 });
        if (sendId) await pauseForPolicy(trx, [sendId], now, policy.onPolicyPause);
      }
    } else if (f.event === FEEDBACK_EVENT.bounce) {
      const moved = await transitionMessages(trx('send_messages').where({ id: message.id }), 'bounceAfterDelivery', { last_error: f.diagnostic.slice(0, 500), bounce_class: klass, updated_at: now });
      if (moved) {
        // Reported once: a message refused at SMTP time was reported then (outcomes.ts).
        const extra = { permanent: f.permanent, status: f.status ?? null, diagnostic: f.diagnostic.slice(0, 500), source: f.source };
        await emitMessageEvents(trx, 'message.bounced', [{ messageId: Number(message.id), userId, extra }], now);
        await moveCounters(trx, message, { delivered: -1, bounced: 1 });
      }
      if (f.permanent) {
        await suppressAddress(trx, { ...suppression, category: 'hard_bounce' });
        if (klass === 'hard' && policy.instanceBounces) await listInstanceBounce(trx, policy.instanceBounces, message.email_key, now);
      } else if ((await softBounces(trx, userId, message.email_key, policy)) >= policy.softBounceLimit) {
        await suppressAddress(trx, { ...suppression, category: 'soft_bounce' });
      }
    } else {
      await addUnsubscribers(trx, { userId, groupId: null }, [message.email], now);
      await countUnsubscribe(trx, message, now);
      await suppressAddress(trx, { ...suppression, category: 'complaint' });
      await emitMessageEvents(trx, 'message.complained', [{ messageId: Number(message.id), userId, extra: { source: f.source } }], now);
    }
    if (sendId) await policy.onRecorded?.(sendId, trx);
    return { result: 'recorded' as const, singleSendId: sendId };
  });
}

async function softBounces(trx: Knex.Transaction, userId: number, key: string, policy: FeedbackPolicy): Promise<number> {
  const since = new Date(policy.now.getTime() - SOFT_BOUNCE_WINDOW_MS).toISOString();
  const row = await trx('message_feedback')
    .where({ user_id: userId, email_key: key, event: FEEDBACK_EVENT.bounce, permanent: 0 })
    .where('created_at', '>=', since)
    .count({ n: '*' })
    .first();
  return Number(row?.n ?? 0);
}
