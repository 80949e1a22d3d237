import type { Knex } from 'knex';
import { nowValue } from '../../db/dialect';
import { MESSAGE_STATE, TRANSACTIONAL_LIMITS, TRANSACTIONAL_STATUSES, type TransactionalStatus } from '../../lib/constants';
import { FieldErrors, NotFoundError, ValidationError } from '../../lib/errors';
import { isBlank, isInteger, isScalar, messages } from '../../lib/validation';
import { isBounceClass } from '../../lib/bounce-class';
import type { Ctx } from '../context';
import { recordAudit } from '../shared/audit-writer';
import { transitionMessages } from '../shared/message-state';
import { AcceptedMessage, ledgerIdOf, MessageSource, RecentSources, resolveMessages, writeMessages } from './accept';
import { checkedKey, requestHash, withIdempotency } from './idempotency';
import { checkMessage, MessageInput } from './message-input';
import { listMessages, LogFilters, messageDetails, TransactionalDetails, TransactionalMessageRecord } from './message-log';
import { createTransactionalTemplates } from './templates';

export interface TransactionalDeps {
  db: Knex;
  /** REQUIRE_DOMAIN_AUTH applies to transactional senders as to campaigns. */
  config?: { domains?: { requireDomainAuth?: boolean } };
  /** The clock (tests move it). */
  now?: () => Date;
}

/** What the log's query string asks for, checked. */
export function logFilters(query: Record<string, unknown>): LogFilters {
  const errors: FieldErrors = {};
  const text = (name: string) => (isBlank(query[name]) ? undefined : isScalar(query[name]) ? String(query[name]) : ((errors[name] = [messages.string(name)]), undefined));
  const status = text('status');
  if (status !== undefined && !(TRANSACTIONAL_STATUSES as readonly string[]).includes(status)) errors.status = [messages.selected('status')];
  const bounceClass = text('bounce_class');
  if (bounceClass !== undefined && !isBounceClass(bounceClass)) errors.bounce_class = [messages.selected('bounce_class')];
  const date = (name: string, end: boolean) => {
    const v = text(name);
    if (v === undefined) return undefined;
    const at = /^\d{4}-\d{2}-\d{2}$/.test(v) ? new Date(`${v}T00:00:00Z`) : new Date(v);
    if (Number.isNaN(at.getTime())) return void (errors[name] = [messages.date(name)]);
    // A day as the end of a range includes that day.
    if (end && /^\d{4}-\d{2}-\d{2}$/.test(v)) at.setUTCDate(at.getUTCDate() + 1);
    return at.toISOString();
  };
  const number = (name: string, fallback: number, max: number) => {
    const v = query[name];
    if (isBlank(v)) return fallback;
    if (!isInteger(v) || Number(v) < 1 || Number(v) > max) return (errors[name] = [messages.between(name, 1, max)]), fallback;
    return Number(v);
  };
  const filters: LogFilters = {
    status: status as TransactionalStatus | undefined,
    bounceClass: bounceClass !== undefined && isBounceClass(bounceClass) ? bounceClass : undefined,
    to: text('to'),
    tag: text('tag'),
    fromDate: date('from_date', false),
    toDate: date('to_date', true),
    page: number('page', 1, 2147483647),
    limit: number('limit', 50, 100),
  };
  if (Object.keys(errors).length) throw new ValidationError(errors);
  return filters;
}

/** The `id` of a request, as a ledger id of the account's transactional messages. */
export function messageIdOf(value: unknown): number {
  const id = ledgerIdOf(value);
  if (id === undefined) throw ValidationError.of('id', isBlank(value) ? messages.required('id') : 'The id must be a transactional message id (tx_…).');
  return id;
}

export function createTransactionalService(deps: TransactionalDeps) {
  const { db } = deps;
  const now = deps.now ?? (() => new Date());
  // A worker in this process listens here so a receipt goes out without waiting for its poll.
  const queuedListeners = new Set<() => void>();
  // Sources whose Liquid parsed.
  const parsed = new RecentSources<true>();

  /** Checks every message, then writes them all in one transaction, answered once per Idempotency-Key. */
  async function accept(ctx: Ctx, inputs: MessageInput[], prefixOf: (i: number) => string, options: { key?: string; hash: string; source: MessageSource }): Promise<AcceptedMessage[]> {
    const answer = await withIdempotency<AcceptedMessage[]>(db, { userId: ctx.userId, key: options.key, hash: options.hash, now: now() }, async (remember) => {
      const resolved = await resolveMessages(db, ctx.userId, inputs, prefixOf, deps.config?.domains?.requireDomainAuth ?? false, parsed);
      return db.transaction(async (trx) => {
        const accepted = await writeMessages(trx, ctx.userId, resolved, options.source);
        await recordAudit(trx, ctx, { action: 'transactional.sent', recordType: 'transactional_message', recordId: accepted[0]?.id ?? null, summary: `${accepted.length} ${accepted.length === 1 ? 'message' : 'messages'}` });
        await remember(trx, accepted);
        return accepted;
      });
    });
    if (answer.some((m) => m.status === 'queued')) for (const listener of queuedListeners) listener();
    return answer;
  }

  return {
    templates: createTransactionalTemplates(db),

    /** Calls `listener` after each accepted request that queued mail; returns how to stop. */
    onQueued(listener: () => void): () => void {
      queuedListeners.add(listener);
      return () => void queuedListeners.delete(listener);
    },

    /** POST /transactional/send: one message per address of `to`. `key`: the Idempotency-Key as given (checked here, for the API and SMTP alike). */
    async send(ctx: Ctx, body: unknown, key?: string, source: MessageSource = 'api'): Promise<AcceptedMessage[]> {
      const checked = checkedKey(key);
      const errors: FieldErrors = {};
      const input = checkMessage(body, errors, '', now());
      if (!input) throw new ValidationError(errors);
      return accept(ctx, [input], () => '', { key: checked, hash: requestHash('send', body), source });
    },

    /** POST /transactional/batch: every message checked before any is written; the answer in order. */
    async batch(ctx: Ctx, body: unknown, key?: string): Promise<AcceptedMessage[]> {
      const checked = checkedKey(key);
      const list = (body as { messages?: unknown } | null)?.messages;
      if (!Array.isArray(list) || !list.length) throw ValidationError.of('messages', isBlank(list) ? messages.required('messages') : messages.array('messages'));
      if (list.length > TRANSACTIONAL_LIMITS.batch) throw ValidationError.of('messages', messages.arrayMax('messages', TRANSACTIONAL_LIMITS.batch));
      const errors: FieldErrors = {};
      const at = now();
      const inputs = list.map((item, i) => checkMessage(item, errors, `messages[${i}].`, at));
      if (Object.keys(errors).length) throw new ValidationError(errors);
      return accept(ctx, inputs as MessageInput[], (i) => `messages[${i}].`, { key: checked, hash: requestHash('batch', list), source: 'api' });
    },

    async list(ctx: Ctx, filters: LogFilters): Promise<{ messages: TransactionalMessageRecord[]; total: number }> {
      return listMessages(db, ctx.userId, filters);
    },

    async details(ctx: Ctx, id: number): Promise<TransactionalDetails> {
      const found = await messageDetails(db, ctx.userId, id);
      if (!found) throw new NotFoundError();
      return found;
    },

    /**
     * Puts a failed message back in the queue with its attempts afresh; its failure stays in its
     * timeline. Any other status is refused, saying why.
     */
    async retry(ctx: Ctx, id: number): Promise<void> {
      await db.transaction(async (trx) => {
        const row = await trx('transactional_messages as t').join('send_messages as m', 'm.id', 't.id').where({ 't.id': id, 't.user_id': ctx.userId }).first('m.state', 'm.last_error', 'm.updated_at');
        if (!row) throw new NotFoundError();
        if (Number(row.state) !== MESSAGE_STATE.failed) {
          const state = Number(row.state);
          const why =
            state === MESSAGE_STATE.queued || state === MESSAGE_STATE.sending
              ? 'This message is still queued; it is retried by itself.'
              : state === MESSAGE_STATE.suppressed
                ? 'This message was suppressed: its address bounced or complained, so it is never sent.'
                : 'Only a failed message can be retried; this one was already handed to the mail server.';
          throw ValidationError.of('id', why);
        }
        const at = nowValue();
        await trx('transactional_events').insert({ message_id: id, type: 'failed', detail: row.last_error ? String(row.last_error).slice(0, 500) : null, at: row.updated_at });
        const moved = await transitionMessages(trx('send_messages').where({ id }), 'retryFailed', {
          attempts: 0,
          unconfirmed: 0,
          available_at: at,
          lease_owner: null,
          last_error: null,
          smtp_code: null,
          failure_reason: null,
          updated_at: at,
        });
        if (!moved) throw ValidationError.of('id', 'Only a failed message can be retried.');
        await recordAudit(trx, ctx, { action: 'transactional.retried', recordType: 'transactional_message', recordId: `tx_${id}`, summary: 'A failed message queued again' });
      });
    },
  };
}

export type TransactionalService = ReturnType<typeof createTransactionalService>;
