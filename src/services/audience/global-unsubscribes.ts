import { deleteOwned } from '../../db/owned';
import { listPage, Paging } from '../../db/paging';
import type { Ctx, ServiceDeps } from '../context';
import { addUnsubscribers, unsubscriberRecord } from '../shared/unsubscribers';
import { audited } from '../shared/audit-writer';

/** Addresses that receive nothing from this account, whatever the send or group. */
/** The addresses of a bulk add, as the log summarises them: the one address, or how many. */
function auditCount(addresses: string[], added: number): string {
  return addresses.length === 1 ? addresses[0] : `${added} of ${addresses.length} addresses new`;
}

export function createGlobalUnsubscribesService({ db }: Pick<ServiceDeps, 'db'>) {
  return {
    async list(ctx: Ctx, paging?: Paging) {
      const query = db('global_unsubscribes').where({ user_id: ctx.userId }).orderBy('id', 'desc');
      return listPage(query, paging, unsubscriberRecord);
    },

    /** Adds addresses; one already unsubscribed keeps its row. */
    async add(ctx: Ctx, addresses: string[]): Promise<void> {
      await audited(db, ctx, (trx) => addUnsubscribers(trx, { userId: ctx.userId, groupId: null }, addresses), (added) => ({
        action: 'global_unsubscribe.added', recordType: 'global_unsubscribe', summary: auditCount(addresses, added),
      }));
    },

    async remove(ctx: Ctx, ids: number[]): Promise<void> {
      await audited(db, ctx, (trx) => deleteOwned(trx, 'global_unsubscribes', ctx.userId, ids), (removed) => ({
        action: 'global_unsubscribe.removed', recordType: 'global_unsubscribe', summary: `${removed} ${removed === 1 ? 'address' : 'addresses'}`,
      }));
    },
  };
}

export type GlobalUnsubscribesService = ReturnType<typeof createGlobalUnsubscribesService>;
