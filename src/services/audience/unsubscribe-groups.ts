import { insertId, nowValue, toCount } from '../../db/dialect';
import { deleteOwned } from '../../db/owned';
import { listPage, Paging } from '../../db/paging';
import { randomToken } from '../../lib/crypto';
import { NotFoundError } from '../../lib/errors';
import { timestamp } from '../../lib/time';
import type { Ctx, ServiceDeps } from '../context';
import { addUnsubscribers, unsubscriberRecord } from '../shared/unsubscribers';
import { audited } from '../shared/audit-writer';

export interface UnsubscribeGroupRecord {
  id: number;
  user_id: number;
  rand_id: string;
  group_name: string;
  description: string;
  is_display: number;
  created_at: string | null;
  updated_at: string | null;
  unsubscribe_clients_count?: number;
}

export interface UnsubscribeGroupInput {
  group_name: string;
  description: string;
  is_display: 0 | 1;
}

export function unsubscribeGroupRecord(row: Record<string, unknown>): UnsubscribeGroupRecord {
  const record: UnsubscribeGroupRecord = {
    id: Number(row.id),
    user_id: Number(row.user_id),
    rand_id: String(row.rand_id),
    group_name: String(row.group_name),
    description: String(row.description),
    is_display: Number(row.is_display),
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
  if (row.unsubscribe_clients_count !== undefined) record.unsubscribe_clients_count = toCount(row.unsubscribe_clients_count);
  return record;
}

export function createUnsubscribeGroupsService({ db }: Pick<ServiceDeps, 'db'>) {
  const groups = (ctx: Ctx) => db('unsubscribe_groups').where({ user_id: ctx.userId });

  async function requireGroup(ctx: Ctx, id: number): Promise<void> {
    if (!(await groups(ctx).where({ id }).first('id'))) throw new NotFoundError();
  }

  return {
    async list(ctx: Ctx, paging?: Paging) {
      const clientsCount = db('unsubscribe_group_recipients')
        .count('*')
        .whereRaw('unsubscribe_group_recipients.unsubscribe_groups_id = unsubscribe_groups.id')
        .as('unsubscribe_clients_count');
      const query = groups(ctx).select('unsubscribe_groups.*', clientsCount).orderBy('id', 'desc');
      return listPage(query, paging, unsubscribeGroupRecord);
    },

    async get(ctx: Ctx, id: number): Promise<UnsubscribeGroupRecord> {
      const row = await groups(ctx).where({ id }).first();
      if (!row) throw new NotFoundError();
      return unsubscribeGroupRecord(row);
    },

    /** True when the id names a group of this account (single sends and automations check it). */
    async exists(ctx: Ctx, id: number): Promise<boolean> {
      return Boolean(await groups(ctx).where({ id }).first('id'));
    },

    async add(ctx: Ctx, input: UnsubscribeGroupInput): Promise<number> {
      const now = nowValue();
      // rand_id is a short public handle of the group (for links), not a secret.
      return audited(db, ctx, (trx) => insertId(trx, 'unsubscribe_groups', { user_id: ctx.userId, rand_id: randomToken(6), ...clean(input), created_at: now, updated_at: now }), (id) => ({
        action: 'unsubscribe_group.created', recordType: 'unsubscribe_group', recordId: id, summary: input.group_name.trim(),
      }));
    },

    async update(ctx: Ctx, id: number, input: UnsubscribeGroupInput): Promise<void> {
      await audited(db, ctx, async (trx) => {
        const changed = await trx('unsubscribe_groups').where({ user_id: ctx.userId, id }).update({ ...clean(input), updated_at: nowValue() });
        if (!changed) throw new NotFoundError();
      }, () => ({ action: 'unsubscribe_group.updated', recordType: 'unsubscribe_group', recordId: id, summary: input.group_name.trim() }));
    },

    /** Adds addresses to a group of this account; an address already in the group keeps its row. */
    async addRecipients(ctx: Ctx, groupId: number, addresses: string[]): Promise<void> {
      await requireGroup(ctx, groupId);
      await audited(db, ctx, (trx) => addUnsubscribers(trx, { userId: ctx.userId, groupId }, addresses), (added) => ({
        action: 'unsubscribe_group.recipients_added', recordType: 'unsubscribe_group', recordId: groupId, summary: `${added} of ${addresses.length} addresses new`,
      }));
    },

    async listRecipients(ctx: Ctx, groupId: number, paging?: Paging) {
      await requireGroup(ctx, groupId);
      const query = db('unsubscribe_group_recipients').where({ user_id: ctx.userId, unsubscribe_groups_id: groupId }).orderBy('id', 'desc');
      return listPage(query, paging, unsubscriberRecord);
    },

    async removeRecipients(ctx: Ctx, ids: number[]): Promise<void> {
      await audited(db, ctx, (trx) => deleteOwned(trx, 'unsubscribe_group_recipients', ctx.userId, ids), (removed) => ({
        action: 'unsubscribe_group.recipients_removed', recordType: 'unsubscribe_group', summary: `${removed} ${removed === 1 ? 'address' : 'addresses'}`,
      }));
    },
  };
}

function clean(input: UnsubscribeGroupInput): UnsubscribeGroupInput {
  return { group_name: input.group_name.trim(), description: input.description.trim(), is_display: input.is_display };
}

export type UnsubscribeGroupsService = ReturnType<typeof createUnsubscribeGroupsService>;
