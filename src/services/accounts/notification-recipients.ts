import { nowValue } from '../../db/dialect';
import { emailKey } from '../../lib/email-key';
import { deleteOwned } from '../../db/owned';
import { listPage, Paging } from '../../db/paging';
import { timestamp } from '../../lib/time';
import type { Ctx, ServiceDeps } from '../context';
import { audited } from '../shared/audit-writer';

export interface NotificationRecipientRecord {
  id: number;
  user_id: number;
  email_address: string;
  email_owner: string;
  created_at: string | null;
  updated_at: string | null;
}

export function notificationRecipientRecord(row: Record<string, unknown>): NotificationRecipientRecord {
  return {
    id: Number(row.id),
    user_id: Number(row.user_id),
    email_address: String(row.email_address),
    email_owner: String(row.email_owner),
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
}

/** Addresses that are told about the account's events (sends, automations, imports, senders). */
export function createNotificationRecipientsService({ db }: Pick<ServiceDeps, 'db'>) {
  const mine = (ctx: Ctx) => db('notification_recipients').where({ user_id: ctx.userId });

  return {
    async list(ctx: Ctx, paging?: Paging) {
      return listPage(mine(ctx).orderBy('id', 'desc'), paging, notificationRecipientRecord);
    },

    /** Every address to notify, for the event mailer. */
    async addresses(ctx: Ctx): Promise<NotificationRecipientRecord[]> {
      return (await mine(ctx).orderBy('id')).map(notificationRecipientRecord);
    },

    /** Adds the address, or, when the account has it already (in any case), updates its owner. */
    async save(ctx: Ctx, input: { email_address: string; email_owner: string }): Promise<void> {
      const now = nowValue();
      const address = input.email_address.trim();
      await audited(db, ctx, (trx) => trx('notification_recipients')
        .insert({ user_id: ctx.userId, email_address: address, email_key: emailKey(address), email_owner: input.email_owner.trim(), created_at: now, updated_at: now })
        .onConflict(['user_id', 'email_key'])
        .merge(['email_owner', 'updated_at']), () => ({ action: 'notification_recipient.created', recordType: 'notification_recipient', summary: address }));
    },

    async remove(ctx: Ctx, ids: number[]): Promise<void> {
      await audited(db, ctx, (trx) => deleteOwned(trx, 'notification_recipients', ctx.userId, ids), (removed) => ({
        action: 'notification_recipient.deleted', recordType: 'notification_recipient', recordId: ids.length === 1 ? ids[0] : null, summary: `${removed} removed`,
      }));
    },
  };
}

export type NotificationRecipientsService = ReturnType<typeof createNotificationRecipientsService>;
