import type { Knex } from 'knex';
import { createSigner, TOKEN_PURPOSE } from '../../../lib/signed-token';

export const MESSAGE_TOKEN = TOKEN_PURPOSE.message;

/** The ledger message a link's token names, with the unsubscribe group of its send or automation. */
export interface TrackedMessage {
  id: number;
  user_id: number;
  email: string;
  email_key: string;
  single_send_id: number | null;
  automation_id: number | null;
  automation_schedule_id: number | null;
  contact_id: number | null;
  sent_at: unknown;
  opened_at: unknown;
  unsubscribed_at: unknown;
  /** Set once its opens and clicks were pruned: later ones add to the totals only. */
  engagement_pruned_at: unknown;
  /** The link numbers of its automation step's content it was sent with (link_versions); null: any of its send's or step's. */
  link_version_id: number | null;
  /** The journey node visit that queued it (a journey's email), else null. */
  journey_visit_id: number | null;
  group_id: number | null;
}

/**
 * Finds the message of a link's signed token: every entry point of opens, clicks and the
 * preference page starts here, so a forged or edited token finds nothing and changes nothing.
 */
export function trackedMessages(secret: string): (trx: Knex, token: string) => Promise<TrackedMessage | undefined> {
  const signer = createSigner(secret);
  return async (trx: Knex, token: string): Promise<TrackedMessage | undefined> => {
    const id = signer.verify(MESSAGE_TOKEN, token);
    if (id === undefined) return undefined;
    const row = await trx('send_messages as m')
      .leftJoin('single_sends as s', 's.id', 'm.single_send_id')
      .leftJoin('automations as a', 'a.id', 'm.automation_id')
      .where('m.id', id)
      .first(
        'm.id', 'm.user_id', 'm.email', 'm.email_key', 'm.single_send_id', 'm.automation_id', 'm.automation_schedule_id', 'm.contact_id', 'm.sent_at',
        'm.opened_at', 'm.unsubscribed_at', 'm.engagement_pruned_at', 'm.link_version_id', 'm.journey_visit_id',
        trx.raw('coalesce(s.unsubscribe_group_id, a.unsubscribe_group_id) as group_id'),
      );
    return row ? { ...row, group_id: row.group_id === null ? null : Number(row.group_id) } : undefined;
  };
}
