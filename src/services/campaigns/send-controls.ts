import type { Knex } from 'knex';
import { nowValue } from '../../db/dialect';
import { MESSAGE_STATE, SINGLE_SEND_STATUS as S } from '../../lib/constants';
import { ConflictError, NotFoundError } from '../../lib/errors';
import { isUtr } from '../../lib/utr';
import type { Ctx, ServiceDeps } from '../context';
import { SingleSendTransition, transitionSingleSends } from './single-send-state';

/**
 * Pause, resume and cancel of a single send (issue 14, point 3; API extensions
 * `GET /single/send/pause|resume|cancel?utr=`). Each is one transaction that changes the
 * send's status from an allowed one (decisions: a wrong state is a 409) and moves its ledger
 * rows: queued ones are parked (`paused`) or dropped (`cancelled`), parked ones queued again.
 * Rows a worker has claimed but not begun to send are parked or dropped by the worker's next
 * ledger write (writeLedger), so nothing goes out after the answer but what was already being
 * handed to the mail server; those finish and are counted. Resume continues exactly where the
 * send stopped: every parked row is queued again, none twice.
 */
export function createSendControlsService({ db }: Pick<ServiceDeps, 'db'>) {
  async function change(ctx: Ctx, utr: string, apply: (trx: Knex.Transaction, send: { id: number; status: number }) => Promise<void>): Promise<void> {
    await db.transaction(async (trx) => {
      const send = isUtr(utr) ? await trx('single_sends').where({ user_id: ctx.userId, utr }).whereNull('deleted_at').first('id', 'status') : undefined;
      if (!send) throw new NotFoundError();
      await apply(trx, { id: Number(send.id), status: Number(send.status) });
    });
  }

  async function transition(trx: Knex.Transaction, id: number, name: SingleSendTransition, refusal: string): Promise<void> {
    if (!(await transitionSingleSends(trx('single_sends').where({ id }), name, { updated_at: nowValue() }))) throw new ConflictError(refusal);
  }

  const rows = (trx: Knex.Transaction, sendId: number, states: number[]) => trx('send_messages').where({ single_send_id: sendId }).whereIn('state', states);

  return {
    async pause(ctx: Ctx, utr: string): Promise<void> {
      await change(ctx, utr, async (trx, send) => {
        await transition(trx, send.id, 'pause', 'Only a scheduled or sending single send can be paused.');
        await rows(trx, send.id, [MESSAGE_STATE.queued]).update({ state: MESSAGE_STATE.paused, updated_at: nowValue() });
      });
    },

    async resume(ctx: Ctx, utr: string): Promise<void> {
      await change(ctx, utr, async (trx, send) => {
        // A send paused before it started has no ledger rows: it goes back to waiting for its time.
        const started = await trx('send_messages').where({ single_send_id: send.id }).first('id');
        await transition(trx, send.id, started ? 'resumeStarted' : 'resumeUnstarted', 'Only a paused single send can be resumed.');
        await rows(trx, send.id, [MESSAGE_STATE.paused]).update({ state: MESSAGE_STATE.queued, updated_at: nowValue() });
      });
    },

    async cancel(ctx: Ctx, utr: string): Promise<void> {
      await change(ctx, utr, async (trx, send) => {
        const refusal = send.status === S.completed ? 'This single send has already been sent.' : 'Only a scheduled, sending or paused single send can be cancelled.';
        await transition(trx, send.id, 'stop', refusal);
        await rows(trx, send.id, [MESSAGE_STATE.queued, MESSAGE_STATE.paused]).update({ state: MESSAGE_STATE.cancelled, last_error: 'the send was cancelled', updated_at: nowValue() });
      });
    },
  };
}

export type SendControlsService = ReturnType<typeof createSendControlsService>;
