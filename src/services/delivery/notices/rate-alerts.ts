import type { Knex } from 'knex';
import { ALERT_RATES, FEEDBACK_EVENT } from '../../../lib/constants';

export interface RateAlert {
  userId: number;
  sendName: string;
  kind: 'bounce' | 'complaint';
  /** Bounces or complaints so far, and the messages that left (delivered + bounced). */
  count: number;
  sent: number;
}

/**
 * Checks a single send's bounce rate (bounces of the messages that left, synchronous and
 * asynchronous) and complaint rate against ALERT_RATES, inside the caller's transaction; each
 * alert passed for the first time is written to send_alerts and handed to `alert` (which mails
 * the notification recipients in the same transaction), so it goes out once per send.
 */
export async function checkSendRates(trx: Knex.Transaction, sendId: number, now: string, alert: (a: RateAlert) => Promise<void>): Promise<void> {
  const send = await trx('single_sends').where({ id: sendId }).first('user_id', 'single_send_name', 'delivered', 'bounces');
  if (!send) return;
  const sent = Number(send.delivered) + Number(send.bounces);
  if (sent <= 0) return;
  const complaints = await trx('message_feedback as f')
    .join('send_messages as m', 'm.id', 'f.message_id')
    .where({ 'm.single_send_id': sendId, 'f.event': FEEDBACK_EVENT.complaint })
    .count({ n: '*' })
    .first();
  const counts = { bounce: Number(send.bounces), complaint: Number(complaints?.n ?? 0) };
  for (const kind of ['bounce', 'complaint'] as const) {
    if (counts[kind] / sent <= ALERT_RATES[kind]) continue;
    const inserted = await trx('send_alerts').insert({ single_send_id: sendId, kind, created_at: now }).onConflict(['single_send_id', 'kind']).ignore().returning('id');
    if (inserted.length) await alert({ userId: Number(send.user_id), sendName: String(send.single_send_name), kind, count: counts[kind], sent });
  }
}
