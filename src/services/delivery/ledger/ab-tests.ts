import type { Knex } from 'knex';
import { toCount } from '../../../db/dialect';
import { forUpdate } from '../../../db/locking';
import { AB_TEST_STATE, AbWinnerMetric, MESSAGE_STATE, SINGLE_SEND_STATUS } from '../../../lib/constants';
import { transitionAbTests } from '../../shared/ab-test-state';
import { moveCounters } from './counters';
import { transitionMessages } from '../../shared/message-state';
import { recordAudit, summaries } from '../../shared/audit-writer';
import { SYSTEM_ACTOR } from '../../context';

/**
 * The sending side of a single send's A/B test. As the send's audience is written (expansion.ts),
 * a share of it spread evenly over the order of writing is queued, split evenly over the
 * variants, each row carrying its variant (`send_messages.ab_variant`), and the rest is held.
 * When the winner is chosen the held rest is queued with the winner's index, in one
 * transaction with the test's own change of state, and rows written after that are queued
 * with it. A recipient has one ledger row per send, so nobody ever gets two variants,
 * whatever crashes in between.
 */

export interface AbTestRow {
  id: number;
  single_send_id: number;
  test_percent: number;
  winner_metric: AbWinnerMetric;
  wait_minutes: number;
  state: number;
  winner: number | null;
  decide_at: unknown;
}

export interface VariantStats {
  triggered: number;
  delivered: number;
  unique_opens: number;
  unique_clicks: number;
}

/** The saved test of a send that has not started yet, with its number of variants; undefined without one. */
export async function waitingAbTestOf(trx: Knex.Transaction, sendId: number): Promise<(AbTestRow & { variants: number }) | undefined> {
  const test = await trx('ab_tests').where({ single_send_id: sendId, state: AB_TEST_STATE.waiting }).first();
  if (!test) return undefined;
  const count = await trx('ab_variants').where({ ab_test_id: test.id }).count({ n: '*' }).first();
  return { ...(test as AbTestRow), variants: toCount(count?.n) };
}

/**
 * How many of `total` recipients get each variant: `test_percent` of them (rounded, and at least
 * one per variant while there are enough), split as evenly as whole people allow.
 */
export function testShares(total: number, percent: number, variants: number): number[] {
  const tested = Math.min(total, Math.max(variants, Math.round((total * percent) / 100)));
  return Array.from({ length: variants }, (_, i) => Math.floor(tested / variants) + (i < tested % variants ? 1 : 0));
}

/**
 * Starts the test of a send, inside the send's start, from its audience counted then (`total`):
 * the share each variant gets is written by the expansion as it goes (abVariantAt in
 * expansion.ts, the rest held), and the winner is due `wait_minutes` from now. Answers the size
 * of the test share (the messages queued before the winner).
 */
export async function startAbTest(trx: Knex.Transaction, test: AbTestRow & { variants: number }, total: number, now: string): Promise<number> {
  const tested = testShares(total, Number(test.test_percent), test.variants).reduce((a, b) => a + b, 0);
  if (tested === total) {
    // Everyone is in the test share: there is no rest for a winner, and the send completes as usual.
    await transitionAbTests(trx('ab_tests').where({ id: test.id }), 'startWithoutRest', { decided_at: now, updated_at: now });
    return tested;
  }
  const decideAt = new Date(Date.parse(now) + Number(test.wait_minutes) * 60_000).toISOString();
  await transitionAbTests(trx('ab_tests').where({ id: test.id }), 'start', { decide_at: decideAt, updated_at: now });
  return tested;
}

/** A group of messages' figures, as columns of a grouped query (delivered: accepted and not bounced since). */
function statsColumns(db: Knex | Knex.Transaction) {
  return [
    db.raw('count(*) as triggered'),
    db.raw('sum(case when state = ? then 1 else 0 end) as delivered', [MESSAGE_STATE.sent]),
    db.raw('sum(case when state = ? and human_opened_at is not null then 1 else 0 end) as unique_opens', [MESSAGE_STATE.sent]),
    db.raw('sum(case when state = ? and clicked_at is not null then 1 else 0 end) as unique_clicks', [MESSAGE_STATE.sent]),
  ];
}

const statsOf = (row: Record<string, unknown>): VariantStats => ({
  triggered: toCount(row.triggered),
  delivered: toCount(row.delivered),
  unique_opens: toCount(row.unique_opens),
  unique_clicks: toCount(row.unique_clicks),
});

/**
 * Each variant's messages so far, by send and variant index: queued, delivered (accepted and not
 * bounced since), opened by a person (automated opens leave `human_opened_at` empty), clicked.
 */
export async function variantStats(db: Knex | Knex.Transaction, sendIds: number[]): Promise<Map<number, Map<number, VariantStats>>> {
  const bySend = new Map<number, Map<number, VariantStats>>();
  if (!sendIds.length) return bySend;
  const rows = await db('send_messages')
    .whereIn('single_send_id', sendIds)
    .whereNotNull('ab_variant')
    .groupBy('single_send_id', 'ab_variant')
    .select(
      'single_send_id',
      'ab_variant',
      ...statsColumns(db),
    );
  for (const row of rows) {
    const sendId = Number(row.single_send_id);
    if (!bySend.has(sendId)) bySend.set(sendId, new Map());
    bySend.get(sendId)!.set(Number(row.ab_variant), statsOf(row));
  }
  return bySend;
}

/** The variant with the best rate of the metric over delivered messages; a tie goes to the lower index. */
export function bestVariant(stats: Map<number, VariantStats>, variants: number, metric: AbWinnerMetric): number {
  let best = 0;
  let bestRate = -1;
  for (let i = 0; i < variants; i += 1) {
    const s = stats.get(i);
    const hits = metric === 'clicks' ? (s?.unique_clicks ?? 0) : (s?.unique_opens ?? 0);
    const rate = s && s.delivered > 0 ? hits / s.delivered : 0;
    if (rate > bestRate) {
      best = i;
      bestRate = rate;
    }
  }
  return best;
}

export type ChooseResult = { chosen: true; winner: number; released: number } | { chosen: false; reason: 'not-testing' | 'not-running' | 'no-variant' };

/** Called inside the choice's transaction once the winner is released (the audit entry, so it exists exactly when the choice does). */
export type OnChosen = (trx: Knex.Transaction, chosen: { winner: number; released: number; userId: number; utr: string; name: string }) => Promise<void>;

/**
 * The rest's messages (released with the winner), by send: counted apart from the test's, whose
 * figures are kept as they were at the decision (`ab_variants.decided_*`).
 */
export async function restStats(db: Knex | Knex.Transaction, sendIds: number[]): Promise<Map<number, VariantStats>> {
  const bySend = new Map<number, VariantStats>();
  if (!sendIds.length) return bySend;
  const rows = await db('send_messages')
    .whereIn('single_send_id', sendIds)
    .where('ab_rest', 1)
    .groupBy('single_send_id')
    .select(
      'single_send_id',
      ...statsColumns(db),
    );
  for (const row of rows) {
    bySend.set(Number(row.single_send_id), statsOf(row));
  }
  return bySend;
}

/**
 * Chooses the winner of a send's test and queues the held rest with it, in one transaction:
 * the send's row is locked first (the order of pause, cancel and the worker's ledger writes),
 * the test must be testing and its send running (a paused send keeps its rest held until it
 * resumes), and the test's guarded change of state decides which of two choosers wins.
 * `variant` undefined: the best by the test's rule.
 */
export async function chooseWinner(db: Knex, sendId: number, variant: number | undefined, now: Date, onChosen?: OnChosen): Promise<ChooseResult> {
  const at = now.toISOString();
  return db.transaction(async (trx) => {
    const send = await forUpdate(trx, trx('single_sends').where({ id: sendId }).first('id', 'status', 'user_id', 'utr', 'single_send_name'));
    const test = (await forUpdate(trx, trx('ab_tests').where({ single_send_id: sendId }).first())) as AbTestRow | undefined;
    if (!send || !test || Number(test.state) !== AB_TEST_STATE.testing) return { chosen: false, reason: 'not-testing' } as const;
    if (Number(send.status) !== SINGLE_SEND_STATUS.running) return { chosen: false, reason: 'not-running' } as const;
    const count = toCount((await trx('ab_variants').where({ ab_test_id: test.id }).count({ n: '*' }).first())?.n);
    if (variant !== undefined && (variant < 0 || variant >= count)) return { chosen: false, reason: 'no-variant' } as const;
    const stats = (await variantStats(trx, [sendId])).get(sendId) ?? new Map<number, VariantStats>();
    const winner = variant ?? bestVariant(stats, count, test.winner_metric);
    const chosenBy = variant === undefined ? 'rule' : 'hand';
    if (!(await transitionAbTests(trx('ab_tests').where({ id: test.id }), 'choose', { winner, chosen_by: chosenBy, decided_at: at, updated_at: at }))) {
      return { chosen: false, reason: 'not-testing' } as const;
    }
    // The figures the choice was made on, kept: the rest's messages carry the winner's index from here on.
    for (let i = 0; i < count; i += 1) {
      const s = stats.get(i);
      await trx('ab_variants').where({ ab_test_id: test.id, variant: i }).update({
        decided_triggered: s?.triggered ?? 0, decided_delivered: s?.delivered ?? 0, decided_opens: s?.unique_opens ?? 0, decided_clicks: s?.unique_clicks ?? 0,
      });
    }
    const released = Number(await transitionMessages(trx('send_messages').where({ single_send_id: sendId }), 'releaseWinner', { ab_variant: winner, ab_rest: 1, available_at: at, updated_at: at }));
    if (released) await moveCounters(trx, { single_send_id: sendId, automation_id: null }, { triggered: released });
    await onChosen?.(trx, { winner, released, userId: Number(send.user_id), utr: String(send.utr), name: String(send.single_send_name) });
    return { chosen: true, winner, released } as const;
  });
}

/**
 * The worker's part: chooses the winner of every test whose wait is over and whose send is
 * running, by its rule. Any number of workers may look at once: chooseWinner locks the send and
 * the test and changes the test's state guarded, so one of them chooses and the others find it
 * chosen. Answers how many were decided.
 */
export async function decideDueAbTests(db: Knex, now: Date, limit = 10): Promise<number> {
  const due = await db('ab_tests as t')
    .join('single_sends as s', 's.id', 't.single_send_id')
    .where('t.state', AB_TEST_STATE.testing)
    .where('t.decide_at', '<=', now.toISOString())
    .where('s.status', SINGLE_SEND_STATUS.running)
    .orderBy('t.decide_at')
    .limit(limit)
    .select('t.single_send_id');
  let decided = 0;
  // The service's own choice, in the audit log as the service's.
  const audit: OnChosen = (trx, c) => recordAudit(trx, { userId: c.userId, actor: SYSTEM_ACTOR }, {
    action: 'single_send.ab_winner_chosen', recordType: 'single_send', recordId: c.utr, summary: summaries.abWinner(c.name, c.winner, 'rule', c.released),
  }, now.toISOString());
  for (const row of due) if ((await chooseWinner(db, Number(row.single_send_id), undefined, now, audit)).chosen) decided += 1;
  return decided;
}

/**
 * The variant that stands for each of these sends when one message is shown for all (the public
 * archive, the send's own page): the winner, else (everyone was in the test) the variant most of
 * its messages carry. Sends without a test are not in the answer.
 */
export async function shownVariants(db: Knex, sendIds: number[]): Promise<Map<number, number>> {
  const shown = new Map<number, number>();
  if (!sendIds.length) return shown;
  const tests = await db('ab_tests').whereIn('single_send_id', sendIds).select('single_send_id', 'winner');
  for (const test of tests) {
    if (test.winner !== null && test.winner !== undefined) {
      shown.set(Number(test.single_send_id), Number(test.winner));
      continue;
    }
    const most = await db('send_messages').where({ single_send_id: test.single_send_id }).whereNotNull('ab_variant')
      .groupBy('ab_variant').orderByRaw('count(*) desc').orderBy('ab_variant').first('ab_variant');
    shown.set(Number(test.single_send_id), most ? Number(most.ab_variant) : 0);
  }
  return shown;
}
