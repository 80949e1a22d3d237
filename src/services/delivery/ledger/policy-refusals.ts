import type { Knex } from 'knex';
import { MESSAGE_STATE, POLICY_REFUSALS, SendPauseReason, TEMPLATE_ERRORS } from '../../../lib/constants';
import { transitionSingleSends } from '../../shared/single-send-state';
import { transitionMessages } from '../../shared/message-state';
import { recordAudit } from '../../shared/audit-writer';
import { SYSTEM_ACTOR } from '../../context';

/** A send paused because receivers refused its mail for the sender's authentication or reputation. */
export interface PolicyPause {
  userId: number;
  sendId: number;
  sendName: string;
  /** Messages refused so, and those attempted (delivered, bounced or failed). */
  refused: number;
  attempted: number;
  /** One of the refusals, as the receiving server or provider worded it (a template error: as the renderer did). */
  example: string;
}

/** The failures that pause a send: the messages' failure_reason (also its send_alerts kind), and how many of those attempted. */
interface PauseRule {
  reason: Extract<SendPauseReason, 'policy' | 'template_error'>;
  pauses(failed: number, attempted: number): boolean;
  /** What the audit log says of the pause, after the send's name. */
  summary(failed: number, attempted: number): string;
}

/**
 * Pauses each of the sends whose policy refusals reached POLICY_REFUSALS (10 messages, or 1% of
 * those attempted), inside the ledger write that recorded them: the send goes to paused (4) and
 * its queued messages wait, as a pause from the dashboard does. The first such pause of a send
 * is written to send_alerts (kind `policy`) and handed to `onPause`, so its notification goes
 * out once, however often the send is resumed and paused again.
 */
export function pauseForPolicy(trx: Knex.Transaction, sendIds: number[], now: string, onPause?: (pause: PolicyPause, trx: Knex.Transaction) => Promise<void>): Promise<void> {
  const pauses = (refused: number, attempted: number) => refused >= POLICY_REFUSALS.minCount || refused >= POLICY_REFUSALS.share * attempted;
  const summary = (refused: number, attempted: number) => `${refused} of ${attempted} messages refused by receiving mail servers for the sender's authentication or reputation`;
  return pauseForFailures(trx, sendIds, now, { reason: 'policy', pauses, summary }, onPause);
}

/**
 * The same for messages whose subject or body did not render (TEMPLATE_ERRORS: more than 5% of
 * at least 20 attempted): the send pauses before its template fails everyone, and its first
 * such pause is told once (send_alerts kind `template_error`).
 */
export function pauseForTemplateErrors(trx: Knex.Transaction, sendIds: number[], now: string, onPause?: (pause: PolicyPause, trx: Knex.Transaction) => Promise<void>): Promise<void> {
  const pauses = (failed: number, attempted: number) => attempted >= TEMPLATE_ERRORS.sample && failed > TEMPLATE_ERRORS.share * attempted;
  const summary = (failed: number, attempted: number) => `${failed} of ${attempted} messages could not be rendered from the template`;
  return pauseForFailures(trx, sendIds, now, { reason: 'template_error', pauses, summary }, onPause);
}

async function pauseForFailures(trx: Knex.Transaction, sendIds: number[], now: string, rule: PauseRule, onPause?: (pause: PolicyPause, trx: Knex.Transaction) => Promise<void>): Promise<void> {
  for (const sendId of sendIds) {
    const send = await trx('single_sends').where({ id: sendId }).first('user_id', 'utr', 'single_send_name', 'delivered', 'bounces', 'failed', 'status');
    if (!send) continue;
    // Failed ones only: a refused message retried since ("retry failed") counts again only if refused again.
    const [{ n }] = await trx('send_messages').where({ single_send_id: sendId, state: MESSAGE_STATE.failed, failure_reason: rule.reason }).count({ n: '*' });
    const refused = Number(n);
    const attempted = Number(send.delivered) + Number(send.bounces) + Number(send.failed);
    if (!rule.pauses(refused, attempted)) continue;
    if (!(await transitionSingleSends(trx('single_sends').where({ id: sendId }), 'pause', { pause_reason: rule.reason, updated_at: now }))) continue;
    await transitionMessages(trx('send_messages').where({ single_send_id: sendId }), 'pause', { updated_at: now });
    // Every such pause is the service's own act, in the log with the send's name and why.
    await recordAudit(trx, { userId: Number(send.user_id), actor: SYSTEM_ACTOR }, {
      action: 'single_send.paused', recordType: 'single_send', recordId: String(send.utr), summary: `${String(send.single_send_name)}: ${rule.summary(refused, attempted)}`,
    }, now);
    const inserted = await trx('send_alerts').insert({ single_send_id: sendId, kind: rule.reason, created_at: now }).onConflict(['single_send_id', 'kind']).ignore().returning('id');
    if (!inserted.length || !onPause) continue;
    const example = await trx('send_messages').where({ single_send_id: sendId, failure_reason: rule.reason }).orderBy('id', 'desc').first('last_error');
    await onPause({ userId: Number(send.user_id), sendId, sendName: String(send.single_send_name), refused, attempted, example: String(example?.last_error ?? '') }, trx);
  }
}
