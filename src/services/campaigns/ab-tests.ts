import type { Knex } from 'knex';
import { nowValue, toCount } from '../../db/dialect';
import { forUpdate } from '../../db/locking';
import { AB_TEST_STATE, AbWinnerMetric, MESSAGE_STATE } from '../../lib/constants';
import { ConflictError, FieldErrors, NotFoundError, ValidationError } from '../../lib/errors';
import { throwIfAny } from '../../lib/validation';
import { liquidErrors } from './template-syntax';
import { isUtr } from '../../lib/utr';
import { chooseWinner, restStats, variantStats } from '../delivery/ledger';
import type { Ctx, ServiceDeps } from '../context';
import { AB_STATUS_NAMES, AbStatusName } from '../shared/ab-test-state';
import { notEditableError, SINGLE_SEND_EDITABLE } from '../shared/single-send-state';
import { recordAudit, summaries } from '../shared/audit-writer';

export interface AbVariantInput {
  subject: string | null;
  preheader: string | null;
  from_name: string | null;
  template_html: string | null;
  template_json: string | null;
}

export interface AbTestInput {
  variants: AbVariantInput[];
  test_percent: number;
  winner_metric: AbWinnerMetric;
  wait_minutes: number;
}

export interface AbVariantRecord {
  index: number;
  /** What the variant's messages are sent with: its own, else the send's. */
  subject: string;
  from_name: string;
  triggered: number;
  delivered: number;
  unique_opens: number;
  unique_clicks: number;
}

export interface AbTestRecord {
  test_percent: number;
  winner_metric: AbWinnerMetric;
  wait_minutes: number;
  status: AbStatusName;
  winner: number | null;
  variants: AbVariantRecord[];
}

/** A variant's (or the rest's) messages: sent, delivered, opened and clicked by people. */
export interface AbFigures {
  triggered: number;
  delivered: number;
  unique_opens: number;
  unique_clicks: number;
}

/** What the dashboard shows beside the record: each variant's own fields as saved, and when the winner is due. */
export interface AbTestDetails extends AbTestRecord {
  decide_at: string | null;
  saved: AbVariantInput[];
  /** Whether the winner was chosen by the test's rule (the worker, when the wait was over) or by hand. */
  chosen_by: 'rule' | 'hand' | null;
  /** Each variant's figures when the winner was chosen, by index (null before, or for a test chosen before they were kept). */
  decided: (AbFigures | null)[];
  /** The rest's messages, sent with the winner, counted apart (null until the winner goes). */
  rest: AbFigures | null;
  /** Recipients still held for the winner. */
  held: number;
}

/**
 * A single send's A/B test (extension `POST /single/send/ab/save`, `GET /single/send/ab/choose`,
 * and `ab` in the send's details). Saving replaces the test of a send that has not started;
 * its sending is services/delivery/ledger/ab-tests.ts.
 */
export function createAbTestsService({ db }: Pick<ServiceDeps, 'db'>) {
  async function sendOf(ctx: Ctx, utr: string, trx: Knex | Knex.Transaction = db) {
    const row = isUtr(utr) ? await trx('single_sends').where({ user_id: ctx.userId, utr }).whereNull('deleted_at').first('id', 'status') : undefined;
    if (!row) throw new NotFoundError();
    return { id: Number(row.id), status: Number(row.status) };
  }

  /** The tests of these sends, by send id, with their variants and each variant's messages so far. */
  async function detailsOf(sendIds: number[]): Promise<Map<number, AbTestDetails>> {
    const found = new Map<number, AbTestDetails>();
    if (!sendIds.length) return found;
    const tests = await db('ab_tests').whereIn('single_send_id', sendIds).select('*');
    if (!tests.length) return found;
    const testedIds = tests.map((t) => Number(t.single_send_id));
    const sends = new Map(
      (await db('single_sends as s').leftJoin('senders as r', 'r.id', 's.sender_id').whereIn('s.id', testedIds).select('s.id', 's.subject', 's.sender_name', 'r.from_name')).map((row) => [Number(row.id), row]),
    );
    const variants = await db('ab_variants').whereIn('ab_test_id', tests.map((t) => t.id)).orderBy('variant').select('*');
    const [stats, rests, heldRows] = await Promise.all([
      variantStats(db, testedIds),
      restStats(db, testedIds),
      db('send_messages').whereIn('single_send_id', testedIds).where('state', MESSAGE_STATE.held).groupBy('single_send_id').select('single_send_id').count({ n: '*' }),
    ]);
    const held = new Map((heldRows as { single_send_id: unknown; n: unknown }[]).map((r) => [Number(r.single_send_id), toCount(r.n)]));
    const figures = (v: Record<string, unknown>): AbFigures | null =>
      v.decided_triggered === null || v.decided_triggered === undefined
        ? null
        : { triggered: toCount(v.decided_triggered), delivered: toCount(v.decided_delivered), unique_opens: toCount(v.decided_opens), unique_clicks: toCount(v.decided_clicks) };
    const value = (v: unknown) => (v === null || v === undefined ? null : String(v));
    for (const test of tests) {
      const sendId = Number(test.single_send_id);
      const send = sends.get(sendId);
      const own = variants.filter((v) => Number(v.ab_test_id) === Number(test.id));
      found.set(sendId, {
        test_percent: Number(test.test_percent),
        winner_metric: test.winner_metric as AbWinnerMetric,
        wait_minutes: Number(test.wait_minutes),
        status: AB_STATUS_NAMES[Number(test.state) as keyof typeof AB_STATUS_NAMES],
        winner: test.winner === null || test.winner === undefined ? null : Number(test.winner),
        decide_at: test.decide_at ? new Date(test.decide_at).toISOString() : null,
        variants: own.map((v) => {
          const index = Number(v.variant);
          const s = stats.get(sendId)?.get(index);
          return {
            index,
            subject: String(v.subject ?? send?.subject ?? ''),
            from_name: String(v.from_name || send?.sender_name || send?.from_name || ''),
            triggered: s?.triggered ?? 0,
            delivered: s?.delivered ?? 0,
            unique_opens: s?.unique_opens ?? 0,
            unique_clicks: s?.unique_clicks ?? 0,
          };
        }),
        chosen_by: test.chosen_by === 'rule' || test.chosen_by === 'hand' ? test.chosen_by : null,
        decided: own.map(figures),
        rest: rests.get(sendId) ?? null,
        held: held.get(sendId) ?? 0,
        saved: own.map((v) => ({
          subject: value(v.subject),
          preheader: value(v.preheader),
          from_name: value(v.from_name),
          template_html: value(v.template_html),
          template_json: value(v.template_json),
        })),
      });
    }
    return found;
  }

  const recordOf = ({ decide_at: _decide, saved: _saved, chosen_by: _by, decided: _decided, rest: _rest, held: _held, ...record }: AbTestDetails): AbTestRecord => record;

  return {
    /**
     * Saves (or replaces) the test of a draft or ready send, in one transaction with the send's
     * row locked, so a send the worker starts meanwhile is either started with the old test or
     * refused here (409), never half of each.
     */
    async save(ctx: Ctx, utr: string, input: AbTestInput): Promise<void> {
      // A variant that cannot render is refused like the send's own content, named by its index.
      const errors: FieldErrors = {};
      input.variants.forEach((variant, i) => {
        const found: FieldErrors = {};
        liquidErrors({ subject: variant.subject, preheader: variant.preheader, template_html: variant.template_html }, found);
        for (const [name, messages] of Object.entries(found)) errors[`variants.${i}.${name}`] = messages;
      });
      throwIfAny(errors);
      await db.transaction(async (trx) => {
        const send = await sendOf(ctx, utr, trx);
        const locked = await forUpdate(trx, trx('single_sends').where({ id: send.id }).first('status'));
        if (!SINGLE_SEND_EDITABLE.includes(Number(locked.status))) throw notEditableError(Number(locked.status), 'update');
        const now = nowValue();
        await trx('ab_tests').where({ single_send_id: send.id }).delete();
        const [inserted] = await trx('ab_tests')
          .insert({
            user_id: ctx.userId,
            single_send_id: send.id,
            test_percent: input.test_percent,
            winner_metric: input.winner_metric,
            wait_minutes: input.wait_minutes,
            state: AB_TEST_STATE.waiting,
            created_at: now,
            updated_at: now,
          })
          .returning('id');
        const testId = Number(typeof inserted === 'object' ? inserted.id : inserted);
        await trx('ab_variants').insert(input.variants.map((v, variant) => ({ ab_test_id: testId, variant, ...v })));
        const summary = `${input.variants.length} variants, ${input.test_percent}% tested, winner by ${input.winner_metric} after ${input.wait_minutes} minutes`;
        await recordAudit(trx, ctx, { action: 'single_send.ab_test_saved', recordType: 'single_send', recordId: utr, summary }, now);
      });
    },

    /**
     * Sends the chosen variant to the rest of the audience at once (the test's wait cut short).
     * 409 unless the test is running on a sending send; 422 for an index the test does not have.
     */
    async choose(ctx: Ctx, utr: string, variant: number): Promise<void> {
      const send = await sendOf(ctx, utr);
      const test = await db('ab_tests').where({ single_send_id: send.id }).first('state');
      if (!test) throw new ConflictError('This single send has no A/B test; save one first.');
      // Recorded inside the choice's transaction: the entry exists exactly when the winner went.
      const result = await chooseWinner(db, send.id, variant, new Date(), (trx, chosen) => recordAudit(trx, ctx, {
        action: 'single_send.ab_winner_chosen', recordType: 'single_send', recordId: utr, summary: summaries.abWinner(chosen.name, chosen.winner, 'hand', chosen.released),
      }));
      if (result.chosen) return;
      if (result.reason === 'no-variant') throw ValidationError.of('variant', 'The selected variant is invalid.');
      if (result.reason === 'not-running') throw new ConflictError('The A/B test\'s send is not sending (paused or cancelled); resume it first.');
      const state = Number((await db('ab_tests').where({ single_send_id: send.id }).first('state'))?.state);
      throw new ConflictError(state === AB_TEST_STATE.waiting
        ? 'The A/B test has not started: a winner can be chosen once its send is sending.'
        : 'The A/B test\'s winner has already been sent.');
    },

    /** The tests of these sends as their records show them, by send id (a send without one is absent). */
    async recordsOf(sendIds: number[]): Promise<Map<number, AbTestRecord>> {
      return new Map([...(await detailsOf(sendIds))].map(([id, details]) => [id, recordOf(details)]));
    },

    /** The test with each variant's saved fields and when the winner is due (the dashboard), or null without one. */
    async details(sendId: number): Promise<AbTestDetails | null> {
      return (await detailsOf([sendId])).get(sendId) ?? null;
    },
  };
}

export type AbTestsService = ReturnType<typeof createAbTestsService>;
