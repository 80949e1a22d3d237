import { deleteOwned } from '../../db/owned';
import { listPage, Paging } from '../../db/paging';
import type { Ctx, ServiceDeps } from '../context';
import { addUnsubscribers, unsubscriberRecord } from './unsubscribers';

/** Addresses that receive nothing from this account, whatever the send or group. */
export function createGlobalUnsubscribesService({ db }: Pick<ServiceDeps, 'db'>) {
  return {
    async list(ctx: Ctx, paging?: Paging) {
      const query = db('global_unsubscribes').where({ user_id: ctx.userId }).orderBy('id', 'desc');
      return listPage(query, paging, unsubscriberRecord);
    },

    /** Adds addresses; one already unsubscribed keeps its row. */
    async add(ctx: Ctx, addresses: string[]): Promise<void> {
      await addUnsubscribers(db, { userId: ctx.userId, groupId: null }, addresses);
    },

    async remove(ctx: Ctx, ids: number[]): Promise<void> {
      await deleteOwned(db, 'global_unsubscribes', ctx.userId, ids);
    },
  };
}

export type GlobalUnsubscribesService = ReturnType<typeof createGlobalUnsubscribesService>;
