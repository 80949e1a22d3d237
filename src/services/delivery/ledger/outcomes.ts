import type { Knex } from 'knex';
import { MESSAGE_STATE, SINGLE_SEND_STATUS } from '../../../lib/constants';
import { forUpdate, lockRows } from '../../../db/locking';
import { transitionSingleSends } from '../../shared/single-send-state';
import { countEach } from './counters';
import { MessageTransition, transitionMessages } from '../../shared/message-state';
import { suppressAddress } from './suppression-list';
import { listInstanceBounce, type InstanceBounceList } from './instance-bounces';
import { emitMessageEvents } from '../../integrations/hook-outbox';
import { pauseForPolicy, pauseForTemplateErrors, PolicyPause } from './policy-refusals';
import type { LedgerRow } from './ledger-row';
import type { RelayFailure } from '../../../mail/relay-transports';
import { bounceClass } from '../../../lib/bounce-class';

/** How one claimed ledger row ended this attempt. */
export type Outcome =
  /** templateErrors: a Liquid value of the message failed and was left empty (counted on its send). */
  /** linkVersion: the automation step's link numbers the message carried (link_versions). */
  | { id: number; result: 'sent'; templateErrors?: boolean; relayId?: number | null; providerMessageId?: string | null; linkVersion?: number | null }
  | { id: number; result: 'retry'; attempts: number; code: number | null; error: string }
  /** Not attempted (its provider is slowed or its cap reached): queued again for `until`, its claim's attempt given back. */
  | { id: number; result: 'held'; until: Date }
  /**
   * Deferred by a provider that throttles the sender: a deferral, not an attempt (it never makes
   * the message fail); queued again for when the provider's wait ends.
   */
  | { id: number; result: 'throttled'; until: Date; code: number | null; error: string }
  | { id: number; result: 'bounce'; userId: number; emailKey: string; code: number | null; error: string }
  | { id: number; result: 'suppressed'; error: string }
  /** Given up at once (it may already have gone out twice: see IN_DOUBT_TWICE). */
  | { id: number; result: 'failed'; error: string }
  /** Refused for the sender's authentication or reputation: failed, the address is never suppressed (see policy-refusals.ts). */
  | { id: number; result: 'policy'; code: number | null; error: string; relayId?: number | null }
  /**
   * The relay went silent after taking the whole message: it may have been delivered, so it is
   * failed (reason `unconfirmed`, the address untouched) and never sent again.
   */
  | { id: number; result: 'unconfirmed'; error: string; relayId?: number | null; linkVersion?: number | null }
  /**
   * Its subject or body did not render (Liquid past its bounds): never sent, failed with reason
   * `template_error`; a retry of the failed sends it again once the template is fixed.
   */
  | { id: number; result: 'template_error'; error: string };

/** Why a message that was in flight at two crashes is not sent a third time. */
export const IN_DOUBT_TWICE =
  'the sending worker stopped twice while handing this message to the mail server; it may have been delivered, so it was not sent a third time';

/**
 * The outcome of a message whose hand-over failed, from the mail layer's verdict on the failure:
 * the one place its words become the ledger's (the worker and deliverNow both ask here).
 */
export function failedOutcome(row: Pick<LedgerRow, 'id' | 'user_id' | 'email_key' | 'attempts'>, failure: Pick<RelayFailure, 'outcome' | 'code' | 'message'>, relayId: number | null = null): Outcome {
  const id = Number(row.id);
  switch (failure.outcome) {
    case 'bounce':
      return { id, result: 'bounce', userId: Number(row.user_id), emailKey: row.email_key, code: failure.code, error: failure.message };
    case 'policy':
      return { id, result: 'policy', code: failure.code, error: failure.message, relayId };
    case 'unconfirmed':
      return { id, result: 'unconfirmed', error: failure.message, relayId };
    case 'failed':
      return { id, result: 'failed', error: failure.message };
    default:
      return { id, result: 'retry', attempts: Number(row.attempts), code: failure.code, error: failure.message };
  }
}

/** What one ledger write records: outcomes, and the messages about to be handed to the server. */
export interface LedgerWrite {
  outcomes: Outcome[];
  /** Rows whose transmission starts once this is written (`unconfirmed` + 1, under this worker's lease). */
  starts?: number[];
}

export interface OutcomePolicy {
  owner: string;
  now: Date;
  maxAttempts: number;
  /** Delay before attempt `attempts + 1`. */
  retryDelayMs(attempts: number): number;
  /** Called inside the transaction that completes a send. */
  onCompleted?(sendId: number, trx: Knex.Transaction): Promise<void>;
  /** Called inside the transaction that paused a send for its policy refusals (once per send). */
  onPolicyPause?(pause: PolicyPause, trx: Knex.Transaction): Promise<void>;
  /** The instance's bounce list, when it is kept (INSTANCE_BOUNCE_LIST): hard bounces are added to it. */
  instanceBounces?: InstanceBounceList;
  /** Called inside the transaction that paused a send for its template errors (once per send). */
  onTemplateErrorPause?(pause: PolicyPause, trx: Knex.Transaction): Promise<void>;
  /**
   * Leave completion to the caller (completeSends, after its queue ran dry) instead of looking
   * in every write: a worker writing every few milliseconds would look hundreds of times a second.
   */
  deferCompletion?: boolean;
}

interface Touched {
  id: number;
  user_id: number;
  single_send_id: number | null;
  automation_id: number | null;
}

const CHUNK = 500;

export interface LedgerWritten {
  /** Single sends this completed (status 2 → 3); none when completion is deferred. */
  completed: number[];
  /** The starts that were marked (the others are no longer this worker's: not to be sent). */
  started: Set<number>;
  /** Single sends whose rows this moved. */
  sends: number[];
}

/** Writes a set of outcomes (see writeLedger); returns the single sends this completed. */
export async function recordOutcomes(db: Knex, outcomes: Outcome[], policy: OutcomePolicy): Promise<number[]> {
  return (await writeLedger(db, { outcomes }, policy)).completed;
}

/**
 * Writes a set of outcomes in one transaction, together with the counters they move, so the
 * statistics always agree with the ledger, and marks the rows whose transmission starts next
 * (so a crash leaves a trace on exactly the messages that may have gone out). Only rows still
 * leased by this worker change: a row whose lease expired and was taken over is left to its
 * new owner (and is neither counted twice nor sent by this worker).
 */
export async function writeLedger(db: Knex, write: LedgerWrite, policy: OutcomePolicy): Promise<LedgerWritten> {
  const { outcomes, starts = [] } = write;
  if (!outcomes.length && !starts.length) return { completed: [], started: new Set(), sends: [] };
  return db.transaction(async (trx) => {
    const w = writing(trx, policy);
    const sends = await lockSendsOf(w, [...outcomes.map((o) => o.id), ...starts]);
    const moved = await moveRows(w, outcomes, sends);
    await parkHalted(w, sends, starts);
    const started = await markStarts(w, starts);
    const sendIds = await countMoved(w, outcomes, moved);
    if (policy.deferCompletion) return { completed: [], started, sends: sendIds };
    const completed = await completeSingleSends(trx, sendIds, w.now);
    for (const id of completed) await policy.onCompleted?.(id, trx);
    return { completed, started, sends: sendIds };
  });
}

/** One ledger write in progress: its transaction, its instant, and the rows it may change. */
interface Writing {
  trx: Knex.Transaction;
  policy: OutcomePolicy;
  now: string;
  /** Rows still leased by this worker. */
  mine(): Knex.QueryBuilder;
  /** Moves rows on from sending (every outcome does), releasing their lease. */
  end(query: Knex.QueryBuilder, name: MessageTransition, patch: Record<string, unknown>): Knex.QueryBuilder;
}

function writing(trx: Knex.Transaction, policy: OutcomePolicy): Writing {
  const now = policy.now.toISOString();
  const done = { available_at: null, lease_owner: null, updated_at: now, unconfirmed: 0 };
  return {
    trx,
    policy,
    now,
    mine: () => trx('send_messages').where({ lease_owner: policy.owner }),
    end: (query, name, patch) => transitionMessages(query, name, { ...done, ...patch }),
  };
}

/** The rows an outcome moved, by what the counters and webhooks make of them. */
interface Moved {
  delivered: Touched[];
  bounced: Array<Touched & { extra?: Record<string, unknown> }>;
  failed: Touched[];
  refusedByPolicy: Touched[];
  /** Failed because their template did not render. */
  unrendered: Touched[];
  /** Moved and counted as nothing (suppressed, to retry). */
  other: Touched[];
}

const RETURNING = ['id', 'user_id', 'single_send_id', 'automation_id'];

/**
 * Phase 1. The sends of every row this write touches are locked first, in id order (PostgreSQL),
 * so a pause or resume (which locks the send, then its rows) waits for this write or this write
 * for it, never both for each other, and the statuses read stay true until commit.
 */
async function lockSendsOf({ trx }: Writing, touchedIds: number[]): Promise<{ id: number; status: number }[]> {
  const sends: { id: number; status: number }[] = [];
  for (let i = 0; i < touchedIds.length; i += CHUNK) {
    const ofRows = trx('send_messages').whereIn('id', touchedIds.slice(i, i + CHUNK)).whereNotNull('single_send_id').select('single_send_id');
    sends.push(...(await forUpdate(trx, trx('single_sends').whereIn('id', ofRows).orderBy('id').select('id', 'status'))));
  }
  return sends;
}

/** Phase 2. Each outcome moves its row to its next state (a hard bounce also suppresses the address). */
async function moveRows(w: Writing, outcomes: Outcome[], sends: { id: number; status: number }[]): Promise<Moved> {
  const { trx, mine, end, now, policy } = w;
  const moved: Moved = { delivered: await moveDelivered(w, outcomes), bounced: [], failed: [], refusedByPolicy: [], unrendered: [], other: [] };
  const pausedSends = sends.filter((send) => Number(send.status) === SINGLE_SEND_STATUS.paused).map((send) => Number(send.id));
  // Skipped messages are written together, one statement per reason.
  const suppressedIds = new Map<string, number[]>();
  for (const o of outcomes) if (o.result === 'suppressed') suppressedIds.set(o.error, [...(suppressedIds.get(o.error) ?? []), o.id]);
  for (const [reason, ids] of suppressedIds) {
    for (let i = 0; i < ids.length; i += CHUNK) {
      moved.other.push(...(await end(mine().whereIn('id', ids.slice(i, i + CHUNK)), 'suppress', { last_error: reason.slice(0, 500) }).returning(RETURNING)));
    }
  }
  for (const o of outcomes) {
    if (o.result === 'bounce') {
      const klass = bounceClass(null, o.error);
      const rows = await end(mine().where({ id: o.id }), 'bounce', { smtp_code: o.code, last_error: o.error.slice(0, 500), bounce_class: klass }).returning([...RETURNING, 'email']);
      if (!rows.length) continue;
      moved.bounced.push(...rows.map((row) => ({ ...row, extra: { permanent: true, smtp_code: o.code, diagnostic: o.error.slice(0, 500) } })));
      const email = String(rows[0].email);
      await suppressAddress(trx, { userId: o.userId, email, emailKey: o.emailKey, category: 'hard_bounce', diagnostic: o.error, source: 'smtp', now, bounceClass: klass });
      if (klass === 'hard' && policy.instanceBounces) await listInstanceBounce(trx, policy.instanceBounces, o.emailKey, now);
    } else if (o.result === 'retry') {
      const final = o.attempts >= policy.maxAttempts;
      const rows = await end(mine().where({ id: o.id }), final ? 'fail' : 'retry', {
        available_at: final ? null : new Date(policy.now.getTime() + policy.retryDelayMs(o.attempts)).toISOString(),
        smtp_code: o.code,
        last_error: o.error.slice(0, 500),
        // A retry without a server's answer (no connection, a busy template) was refused by nobody.
        bounce_class: o.code === null ? null : bounceClass(null, o.error),
      }).returning([...RETURNING, 'email_key']);
      (final ? moved.failed : moved.other).push(...rows);
      if (o.code !== null) await recordDeferrals(trx, rows, o, now);
    } else if (o.result === 'held' || o.result === 'throttled') {
      const given = { available_at: o.until.toISOString(), attempts: trx.raw('?? - 1', ['attempts']) };
      // Held before it started: a crash's trace on it stays. Throttled: it was refused, so it certainly did not go.
      const patch = o.result === 'held'
        ? { ...given, unconfirmed: trx.raw('??', ['unconfirmed']) }
        : { ...given, smtp_code: o.code, last_error: o.error.slice(0, 500), bounce_class: bounceClass(null, o.error) };
      const rows = await end(mine().where({ id: o.id }), 'retry', patch).returning([...RETURNING, 'email_key']);
      moved.other.push(...rows);
      if (o.result === 'throttled') await recordDeferrals(trx, rows, o, now);
    } else if (o.result === 'failed') {
      moved.failed.push(...(await end(mine().where({ id: o.id }), 'fail', { last_error: o.error.slice(0, 500) }).returning(RETURNING)));
    } else if (o.result === 'policy') {
      const patch = { smtp_code: o.code, last_error: o.error.slice(0, 500), failure_reason: 'policy', relay_id: o.relayId ?? null, bounce_class: 'policy' };
      const rows = await end(mine().where({ id: o.id }), 'fail', patch).returning(RETURNING);
      moved.failed.push(...rows);
      moved.refusedByPolicy.push(...rows);
    } else if (o.result === 'unconfirmed') {
      const patch = { smtp_code: null, last_error: o.error.slice(0, 500), failure_reason: 'unconfirmed', relay_id: o.relayId ?? null, link_version_id: o.linkVersion ?? null };
      moved.failed.push(...(await end(mine().where({ id: o.id }), 'fail', patch).returning(RETURNING)));
    } else if (o.result === 'template_error') {
      // A send paused since the claim (by earlier template errors, or by hand) keeps the rest
      // of its messages for after a fix instead of failing them too.
      const ofPausedSend = mine().where({ id: o.id }).whereIn('single_send_id', pausedSends);
      if (await transitionMessages(ofPausedSend, 'pauseClaimed', { lease_owner: null, available_at: now, updated_at: now, attempts: trx.raw('?? - 1', ['attempts']) })) continue;
      const patch = { smtp_code: null, last_error: `template_error: ${o.error}`.slice(0, 500), failure_reason: 'template_error' };
      const rows = await end(mine().where({ id: o.id }), 'fail', patch).returning(RETURNING);
      moved.failed.push(...rows);
      moved.unrendered.push(...rows);
    }
  }
  return moved;
}

/**
 * Messages sent through the same relay with the same links and without a provider's id are
 * written together; a provider's id is the message's own.
 */
async function moveDelivered({ mine, end, now }: Writing, outcomes: Outcome[]): Promise<Touched[]> {
  const delivered: Touched[] = [];
  const sentOutcomes = outcomes.filter((o): o is Extract<Outcome, { result: 'sent' }> => o.result === 'sent');
  const alike = new Map<string, { relayId: number | null; linkVersion: number | null; ids: number[] }>();
  for (const o of sentOutcomes) {
    if (o.providerMessageId) continue;
    const group = { relayId: o.relayId ?? null, linkVersion: o.linkVersion ?? null };
    const key = `${group.relayId}:${group.linkVersion}`;
    if (!alike.has(key)) alike.set(key, { ...group, ids: [] });
    alike.get(key)!.ids.push(o.id);
  }
  for (const { relayId, linkVersion, ids: sentIds } of alike.values()) {
    for (let i = 0; i < sentIds.length; i += CHUNK) {
      const patch = { sent_at: now, smtp_code: null, last_error: null, bounce_class: null, relay_id: relayId, link_version_id: linkVersion };
      delivered.push(...(await end(mine().whereIn('id', sentIds.slice(i, i + CHUNK)), 'deliver', patch).returning(RETURNING)));
    }
  }
  for (const o of sentOutcomes.filter((x) => x.providerMessageId)) {
    const patch = { sent_at: now, smtp_code: null, last_error: null, bounce_class: null, relay_id: o.relayId ?? null, link_version_id: o.linkVersion ?? null, provider_message_id: String(o.providerMessageId).slice(0, 255) };
    delivered.push(...(await end(mine().where({ id: o.id }), 'deliver', patch).returning(RETURNING)));
  }
  return delivered;
}

/**
 * Phase 3. Claimed rows of a send paused or cancelled since the claim do not start: parked or
 * dropped (the claim's attempt is given back: nothing was attempted).
 */
async function parkHalted({ trx, mine, now }: Writing, sends: { id: number; status: number }[], starts: number[]): Promise<void> {
  for (const [status, name] of [[SINGLE_SEND_STATUS.paused, 'pauseClaimed'], [SINGLE_SEND_STATUS.cancelled, 'cancelClaimed']] as const) {
    const halted = sends.filter((send) => Number(send.status) === status).map((send) => Number(send.id));
    if (!halted.length || !starts.length) continue;
    for (let i = 0; i < starts.length; i += CHUNK) {
      const claimed = mine().whereIn('id', starts.slice(i, i + CHUNK)).whereIn('single_send_id', halted);
      await transitionMessages(claimed, name, { lease_owner: null, available_at: now, updated_at: now, attempts: trx.raw('?? - 1', ['attempts']) });
    }
  }
}

/** Phase 4. The rows whose transmission starts now carry the trace a crash would leave (`unconfirmed` + 1). */
async function markStarts({ trx, mine }: Writing, starts: number[]): Promise<Set<number>> {
  const started = new Set<number>();
  for (let i = 0; i < starts.length; i += CHUNK) {
    const rows = await mine()
      .where({ state: MESSAGE_STATE.sending })
      .whereIn('id', starts.slice(i, i + CHUNK))
      .update({ unconfirmed: trx.raw('?? + 1', ['unconfirmed']) })
      .returning(['id']);
    for (const row of rows) started.add(Number(row.id));
  }
  return started;
}

/**
 * Phase 5. Every send and automation row this moves is locked first, in id order, so two
 * workers never wait on each other in a circle; then the counters, the outgoing webhooks and
 * the pauses for policy refusals and template errors. Answers the single sends whose rows moved.
 */
async function countMoved({ trx, now, policy }: Writing, outcomes: Outcome[], moved: Moved): Promise<number[]> {
  const { delivered, bounced, failed, refusedByPolicy, unrendered, other } = moved;
  const all = [...delivered, ...bounced, ...failed, ...other];
  const sendIds = ids(all.map((r) => r.single_send_id));
  const automationIds = ids(all.map((r) => r.automation_id));
  if (sendIds.length) await lockRows(trx, trx('single_sends').whereIn('id', sendIds).orderBy('id').select('id'));
  if (automationIds.length) await lockRows(trx, trx('automations').whereIn('id', automationIds).orderBy('id').select('id'));
  await countEach(trx, delivered, 'delivered');
  const withTemplateErrors = new Set(outcomes.filter((o) => o.result === 'sent' && o.templateErrors).map((o) => o.id));
  if (withTemplateErrors.size) await countEach(trx, delivered.filter((r) => withTemplateErrors.has(Number(r.id))), 'templateErrors');
  await countEach(trx, bounced, 'bounced');
  await countEach(trx, failed, 'failed');
  // Outgoing webhooks: written with the outcomes, so each is reported once and never lost.
  await emitMessageEvents(trx, 'message.delivered', delivered.map((r) => ({ messageId: Number(r.id), userId: Number(r.user_id) })), now);
  await emitMessageEvents(trx, 'message.bounced', bounced.map((r) => ({ messageId: Number(r.id), userId: Number(r.user_id), extra: r.extra })), now);
  const policySends = ids(refusedByPolicy.map((r) => r.single_send_id));
  if (policySends.length) await pauseForPolicy(trx, policySends, now, policy.onPolicyPause);
  const unrenderedSends = ids(unrendered.map((r) => r.single_send_id));
  if (unrenderedSends.length) await pauseForTemplateErrors(trx, unrenderedSends, now, policy.onTemplateErrorPause);
  return sendIds;
}

/**
 * Completes those of the sends none of whose rows is queued or sending any more, each in its
 * own short transaction with its completion hook. Run after the outcomes were committed: of
 * two workers writing a send's last outcomes, the one that commits last then sees them all.
 */
export async function completeSends(db: Knex, sendIds: number[], now: Date, onCompleted?: OutcomePolicy['onCompleted']): Promise<number[]> {
  const completed: number[] = [];
  for (const id of sendIds) {
    const done = await db.transaction(async (trx) => {
      const [sendId] = await completeSingleSends(trx, [id], now.toISOString());
      if (sendId !== undefined) await onCompleted?.(sendId, trx);
      return sendId;
    });
    if (done !== undefined) completed.push(done);
  }
  return completed;
}

/**
 * A server's temporary refusal, kept per message for the per-provider figures (which refusals a
 * provider answers most): the enhanced code when the reply has one, else the reply code.
 */
async function recordDeferrals(trx: Knex.Transaction, rows: Array<Touched & { email_key?: string }>, o: { code: number | null; error: string }, now: string): Promise<void> {
  if (!rows.length) return;
  const code = /\b[45]\.\d{1,3}\.\d{1,3}\b/.exec(o.error)?.[0] ?? String(o.code);
  const text = o.error.replace(/^[A-Z]+:\s*/, '').slice(0, 200);
  await trx('message_deferrals').insert(
    rows.map((row) => ({ message_id: row.id, user_id: row.user_id, domain: String(row.email_key ?? '').slice(String(row.email_key ?? '').lastIndexOf('@') + 1), code, text, created_at: now })),
  );
}

/** Distinct non-null ids, ascending. */
function ids(values: Array<number | null | undefined>): number[] {
  return [...new Set(values.filter((v): v is number => v !== null && v !== undefined).map(Number))].sort((a, b) => a - b);
}

/** Running sends whose audience is written and none of whose ledger rows is still queued, sending or held become completed. */
export async function completeSingleSends(trx: Knex.Transaction, sendIds: number[], now: string): Promise<number[]> {
  const completed: number[] = [];
  if (!sendIds.length) return completed;
  // Two workers finishing a send's last rows at once: the one that gets the send's row lock
  // second checks after the first committed (a new snapshot per statement), so one of them
  // always sees every row final. (recordOutcomes took the locks already, in id order.)
  await lockRows(trx, trx('single_sends').whereIn('id', sendIds).orderBy('id').select('id'));
  for (const id of sendIds) {
    const unfinished = trx('send_messages')
      .select(trx.raw('1'))
      .where({ single_send_id: id })
      // Held: an A/B test's rest, waiting for its winner.
      .whereIn('state', [MESSAGE_STATE.queued, MESSAGE_STATE.sending, MESSAGE_STATE.held]);
    // A send whose audience is still being written (expand_cursor) is not complete either.
    const query = trx('single_sends').where({ id }).whereNull('expand_cursor').whereNotExists(unfinished);
    if (await transitionSingleSends(query, 'complete', { updated_at: now })) completed.push(id);
  }
  return completed;
}
