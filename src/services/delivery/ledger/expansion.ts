import type { Knex } from 'knex';
import { toCount } from '../../../db/dialect';
import { insertSelect, insertSelectReturning } from '../../../db/insert-select';
import { forUpdate, tryLockKey } from '../../../db/locking';
import { typedParam } from '../../../db/typed-param';
import { AB_TEST_STATE, MESSAGE_KIND, MESSAGE_STATE, SINGLE_SEND_STATUS } from '../../../lib/constants';
import { SCHEDULE_LOCAL_TIME } from '../../../lib/zoned-time';
import { transitionMessages } from '../../shared/message-state';
import { testShares } from './ab-tests';
import { audienceSources, batchEnd, batchRecipients, ExpandableSend, SourceKey } from './expand';
import { localDueTimes } from './local-time';
import { completeSingleSends } from './outcomes';

/**
 * A single send's ledger is written while it sends: starting it writes no recipient's row, and
 * the worker expands its audience in batches along a keyset cursor kept on the send's row
 * (`expand_cursor`), each batch and the cursor's move in one transaction, so a crash repeats or
 * skips nobody. The cursor names the source (audienceSources), the last key written from it,
 * and the rows written so far. An address is written as of the moment its batch is expanded:
 * one unsubscribed or suppressed before that is never written (and the worker's last check
 * before sending leaves out those who leave after). The worker keeps the expansion a few
 * batches ahead of the sending (expandRunningSends), so the first message leaves at once and
 * memory stays flat whatever the audience.
 */
export interface ExpandCursor {
  /** The index of the source being walked. */
  source: number;
  /** The last key written from it; null: from its start. */
  after: SourceKey | null;
  /** Ledger rows this send's expansion has written so far (an A/B test's share is chosen by it). */
  written: number;
}

export const FIRST_CURSOR: ExpandCursor = { source: 0, after: null, written: 0 };

export function parseCursor(value: unknown): ExpandCursor | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  const parsed = JSON.parse(String(value)) as Partial<ExpandCursor>;
  return { source: Number(parsed.source ?? 0), after: parsed.after ?? null, written: Number(parsed.written ?? 0) };
}

export interface ExpandOptions {
  /** Addresses read per batch. */
  batch: number;
  /** Called inside the transaction that completes a send whose last batch wrote nobody left to send. */
  onCompleted?(sendId: number, trx: Knex.Transaction): Promise<void>;
}

/** The advisory lock space of expansions: one expander per send at a time (PostgreSQL). */
const EXPANDING = 40_001;

/** What one batch did: wrote and more is left, finished the expansion, or found nothing to do. */
export type BatchResult = 'more' | 'finished' | 'idle';

interface AbShare {
  state: number;
  winner: number | null;
  /** The recipients counted at the start, and how many of them are in the test share. */
  total: number;
  tested: number;
  variants: number;
}

/**
 * An A/B test's share, spread evenly over the expansion order: the p-th row written is in the
 * share when ⌊(p+1)·tested/total⌋ passes ⌊p·tested/total⌋, and its variant is that share index
 * modulo the variants. The choice depends only on the row's place, so a batch repeated after a
 * crash chooses the same, and the shares come out exactly as testShares counted them.
 */
export function abVariantAt(position: number, share: Pick<AbShare, 'total' | 'tested' | 'variants'>): number | undefined {
  const { total, tested, variants } = share;
  if (total <= 0) return undefined;
  if (tested >= total) return position % variants;
  if (position >= total) return undefined;
  const index = Math.floor((position * tested) / total);
  return Math.floor(((position + 1) * tested) / total) > index ? index % variants : undefined;
}

async function abShareOf(trx: Knex.Transaction, sendId: number, total: number): Promise<AbShare | undefined> {
  // Locked, so a winner chosen meanwhile either releases this batch's held rows (it waits for
  // this transaction) or is seen here (this waits for it) and the rows are queued with it.
  const test = await forUpdate(trx, trx('ab_tests').where({ single_send_id: sendId }).first('id', 'state', 'winner', 'test_percent'));
  if (!test || Number(test.state) === AB_TEST_STATE.waiting) return undefined;
  const variants = toCount((await trx('ab_variants').where({ ab_test_id: test.id }).count({ n: '*' }).first())?.n);
  const tested = testShares(total, Number(test.test_percent), variants).reduce((a, b) => a + b, 0);
  return { state: Number(test.state), winner: test.winner === null || test.winner === undefined ? null : Number(test.winner), total, tested, variants };
}

/**
 * Expands the next batch of one running send, in one transaction: the rows of its current source
 * after the cursor (up to `batch` of them, before exclusions), the counter of queued messages,
 * and the cursor's move, guarded so that a send paused or cancelled meanwhile (or a cursor
 * another worker moved) writes nothing. The last batch clears the cursor, corrects
 * `recipients_total` to the rows written and completes the send if nothing is left to send.
 */
export async function expandBatch(db: Knex, sendId: number, now: Date, options: ExpandOptions): Promise<BatchResult> {
  const at = now.toISOString();
  return db.transaction(async (trx) => {
    if (!(await tryLockKey(trx, EXPANDING, sendId))) return 'idle';
    const send = await trx('single_sends').where({ id: sendId, status: SINGLE_SEND_STATUS.running }).whereNotNull('expand_cursor').whereNull('deleted_at').first();
    const cursor = send && parseCursor(send.expand_cursor);
    if (!send || !cursor) return 'idle';
    const sources = audienceSources(send);
    const source = sources[cursor.source];
    let next: ExpandCursor;
    let queued = 0;
    if (!source) {
      next = cursor;
    } else {
      const upto = await batchEnd(trx, Number(send.user_id), source, cursor.after, Math.max(1, options.batch));
      const written = await writeBatch(trx, send as ExpandableSend, batchRecipients(trx, send as ExpandableSend, source, cursor.after, upto), cursor.written, at);
      queued = written.queued;
      next = upto === null ? { source: cursor.source + 1, after: null, written: cursor.written + written.rows } : { source: cursor.source, after: upto, written: cursor.written + written.rows };
    }
    const finished = next.source >= sources.length;
    const patch: Record<string, unknown> = { expand_cursor: finished ? null : JSON.stringify(next), updated_at: at };
    if (queued) patch.triggered = trx.raw('?? + ?', ['triggered', queued]);
    if (finished) patch.recipients_total = next.written;
    // The guard: the cursor as read and the send still running (a pause or cancel in between wins).
    const moved = await trx('single_sends').where({ id: sendId, status: SINGLE_SEND_STATUS.running, expand_cursor: send.expand_cursor }).update(patch);
    if (!moved) throw new CursorMoved();
    if (!finished) return 'more';
    const [completed] = await completeSingleSends(trx, [sendId], at);
    if (completed !== undefined) await options.onCompleted?.(completed, trx);
    return 'finished';
  }).catch((err: unknown) => {
    if (err instanceof CursorMoved) return 'idle' as const;
    throw err;
  });
}

/** The send changed under a batch: it is rolled back and nothing was written. */
class CursorMoved extends Error {}

/**
 * Writes one batch's rows: queued (due now, or at the send's time on each recipient's clock);
 * an A/B test's rows held but for its share (by abVariantAt), or queued with the winner once it
 * is chosen. Answers the rows written and how many of them are queued.
 */
async function writeBatch(trx: Knex.Transaction, send: ExpandableSend, recipients: Knex.QueryBuilder, before: number, at: string): Promise<{ rows: number; queued: number }> {
  const onLocalClock = Number(send.schedule_type) === SCHEDULE_LOCAL_TIME;
  const due = onLocalClock ? (await localDueTimes(trx, send, recipients, at)).dueAt : typedParam(trx, at, 'timestamptz');
  const share = await abShareOf(trx, send.id, Number((send as { recipients_total?: unknown }).recipients_total ?? 0));
  const testing = share?.state === AB_TEST_STATE.testing || (share?.state === AB_TEST_STATE.sent && share.winner === null);
  const columns = (state: number, variant: number | null = null, rest = false) => ({
    user_id: typedParam(trx, Number(send.user_id), 'integer'),
    kind: typedParam(trx, MESSAGE_KIND.single, 'smallint'),
    single_send_id: typedParam(trx, send.id, 'integer'),
    contact_id: 't.contact_id',
    segment_recipient_id: 't.segment_recipient_id',
    email: 't.email',
    email_key: 't.email_key',
    state: typedParam(trx, state, 'smallint'),
    ab_variant: typedParam(trx, variant, 'smallint'),
    // The rest's messages, as chooseWinner marks those it releases (restStats counts them apart).
    ab_rest: typedParam(trx, rest ? 1 : null, 'smallint'),
    available_at: due,
    created_at: typedParam(trx, at, 'timestamptz'),
    updated_at: typedParam(trx, at, 'timestamptz'),
  });
  if (!share || !testing) {
    const rows = await insertSelect(trx, 'send_messages', columns(MESSAGE_STATE.queued, share?.winner ?? null, share !== undefined), recipients);
    return { rows, queued: rows };
  }
  const held = await insertSelectReturning(trx, 'send_messages', columns(MESSAGE_STATE.held), recipients, ['id']);
  const ids = held.map((row) => Number(row.id)).sort((a, b) => a - b);
  const byVariant = new Map<number, number[]>();
  ids.forEach((id, i) => {
    const variant = abVariantAt(before + i, share);
    if (variant !== undefined) byVariant.set(variant, [...(byVariant.get(variant) ?? []), id]);
  });
  let queued = 0;
  for (const [variant, variantIds] of byVariant) {
    for (let i = 0; i < variantIds.length; i += 500) {
      const chunk = trx('send_messages').whereIn('id', variantIds.slice(i, i + 500));
      queued += Number(await transitionMessages(chunk, 'testVariant', { ab_variant: variant, updated_at: at }));
    }
  }
  return { rows: ids.length, queued };
}

export interface ExpandRunning extends ExpandOptions {
  /** Batches of queued messages kept ahead of the sending; the expansion waits while there are more. */
  ahead: number;
  /** Expand every running send to its end (runOnce), not only a few batches ahead. */
  everything?: boolean;
}

/**
 * The worker's part: writes one batch of each running send that has an audience left to write
 * and fewer than `ahead` batches of its messages queued (a send on its recipients' clocks,
 * whose rows wait for their hour, is not held back by that), or all of them with `everything`.
 * One batch per send and call, so the sending lanes wake between two batches (a batch is a
 * fraction of a second; the worker asks every `pollMs`). Any number of workers may call it: an
 * expansion has one expander at a time. Answers the batches written.
 */
export async function expandRunningSends(db: Knex, now: Date, options: ExpandRunning): Promise<number> {
  const sends = await db('single_sends').where({ status: SINGLE_SEND_STATUS.running }).whereNotNull('expand_cursor').whereNull('deleted_at').orderBy('id').limit(20).select('id', 'schedule_type');
  let batches = 0;
  for (const send of sends) {
    const windowed = !options.everything && Number(send.schedule_type) !== SCHEDULE_LOCAL_TIME;
    for (;;) {
      if (windowed && (await queuedAhead(db, Number(send.id), options.ahead * options.batch)) >= options.ahead * options.batch) break;
      const result = await expandBatch(db, Number(send.id), now, options);
      if (result === 'idle') break;
      batches += 1;
      if (result === 'finished' || !options.everything) break;
    }
  }
  return batches;
}

/** Queued messages of a send, counted up to `limit`. */
async function queuedAhead(db: Knex, sendId: number, limit: number): Promise<number> {
  const queued = db('send_messages').where({ single_send_id: sendId, state: MESSAGE_STATE.queued }).limit(limit).select(db.raw('1 as one'));
  return toCount((await db.from(queued.as('q')).count({ n: '*' }).first())?.n);
}
