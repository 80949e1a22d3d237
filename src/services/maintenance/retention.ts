import type { Knex } from 'knex';
import type { RetentionDays } from '../../config';
import { deleteSome, releaseFreePages } from '../../db/pruning';
import { HOOK_DELIVERY_STATE, MESSAGE_KIND, MESSAGE_STATE, SIGNUP, SINGLE_SEND_STATUS, TRANSACTIONAL_LIMITS } from '../../lib/constants';
import type { ServiceDeps } from '../context';

/** Rows per statement: each batch is a short transaction, so no lock is held for long and memory stays flat. */
export const PRUNE_BATCH = 500;
const DAY_MS = 24 * 3600_000;

/** Ledger states a message does not leave again. */
const FINAL_STATES = [MESSAGE_STATE.sent, MESSAGE_STATE.failed, MESSAGE_STATE.bounced, MESSAGE_STATE.suppressed, MESSAGE_STATE.cancelled];
/** Single sends whose messages will not change again. */
const FINISHED_SENDS = [SINGLE_SEND_STATUS.completed, SINGLE_SEND_STATUS.cancelled];

/** How a long pruning run is told to stop between two batches (a worker that is stopping). */
export interface PruneOptions {
  now?: Date;
  batchSize?: number;
  shouldStop?: () => boolean;
}

/** What one run deleted. */
export interface PruneCounts {
  sessions: number;
  signups: number;
  webhookTokens: number;
  signupMailSlots: number;
  /** Idempotency-Keys of transactional mail past their day. */
  idempotencyKeys: number;
  /** Messages whose opens and clicks were deleted. */
  engagement: number;
  messages: number;
  webhookDeliveries: number;
  /** Audit log entries older than AUDIT_RETENTION_DAYS. */
  auditEntries: number;
  /** SQLite pages handed back to the file system. */
  freedPages: number;
}

/** Lets other work in this process (and other processes' writes) in between two batches. */
const breathe = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Runs `batch` until it deletes fewer than `size` rows (or the run is told to stop); answers the total. */
async function untilDone(size: number, shouldStop: () => boolean, batch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const done = await batch();
    total += done;
    if (done < size || shouldStop()) return total;
    await breathe();
  }
}

/** The messages whose opens or clicks are still kept: what the partial index send_messages_engaged holds. */
const ENGAGED_KEPT = '(opened_at is not null or clicked_at is not null) and engagement_pruned_at is null';

/** Messages sent before `before` (of one account when given) whose opens or clicks are kept. */
export function engagedMessages(db: Knex, scope: { before: string; userId?: number }): Knex.QueryBuilder {
  const query = db('send_messages').whereRaw(ENGAGED_KEPT).where('sent_at', '<', scope.before);
  return scope.userId === undefined ? query : query.where('user_id', scope.userId);
}

/**
 * Deletes the opens and clicks of messages sent before `before` (of one account when given):
 * their clicks per link and their first open and click times. The totals of their sends,
 * automations and links stay as counted, and a later open or click adds to the totals only
 * (engagement_pruned_at). Answers how many messages lost their engagement.
 */
export async function pruneEngagement(db: Knex, scope: { before: string; userId?: number }, options: PruneOptions = {}): Promise<number> {
  const size = options.batchSize ?? PRUNE_BATCH;
  const now = (options.now ?? new Date()).toISOString();
  let after = 0;
  return untilDone(size, options.shouldStop ?? (() => false), async () => {
    const ids = (await engagedMessages(db, scope).where('id', '>', after).orderBy('id').limit(size).pluck('id')).map(Number);
    if (!ids.length) return 0;
    after = ids[ids.length - 1];
    await db.transaction(async (trx) => {
      await trx('link_clicks').whereIn('message_id', ids).delete();
      await trx('send_messages')
        .whereIn('id', ids)
        .update({ opened_at: null, human_opened_at: null, clicked_at: null, open_seq: null, engagement_pruned_at: now });
    });
    return ids.length;
  });
}

/**
 * Deletes old data by the RETENTION_*_DAYS settings, and what is always pruned: expired
 * sessions, signups whose confirmation expired long ago, and spent tokens and slots. Every
 * kind goes in batches of short statements; on SQLite the file then hands the space back.
 */
export function createRetentionService({ db, config, logger }: Pick<ServiceDeps, 'db' | 'config' | 'logger'>) {
  const policy = (): RetentionDays => ({ ...config.retention });

  /** The message rows of finished single sends last changed before `before`, and the service's own mail. */
  async function pruneMessages(before: string, size: number, shouldStop: () => boolean): Promise<number> {
    let deleted = 0;
    let afterSend = 0;
    for (;;) {
      // Only sends with rows left to delete: one probe of send_messages (single_send_id, state) each.
      const sends = (
        await db('single_sends as s')
          .whereIn('s.status', FINISHED_SENDS)
          .where('s.updated_at', '<', before)
          .where('s.id', '>', afterSend)
          .whereExists(db('send_messages as m').select(db.raw('1')).whereRaw('m.single_send_id = s.id').whereIn('m.state', FINAL_STATES))
          .orderBy('s.id')
          .limit(100)
          .pluck('s.id')
      ).map(Number);
      if (!sends.length || shouldStop()) break;
      afterSend = sends[sends.length - 1];
      for (const sendId of sends) {
        // Their link_clicks and message_feedback rows go with them (ON DELETE CASCADE).
        deleted += await untilDone(size, shouldStop, () => deleteSome(db, 'send_messages', (q) => q.where('single_send_id', sendId).whereIn('state', FINAL_STATES), size));
        if (shouldStop()) return deleted;
      }
    }
    // System mail (verification, notifications) carries its whole body in the row.
    // Read in id order through their partial index; the ones still queued or recent are passed over.
    for (let afterId = 0; !shouldStop(); await breathe()) {
      const ids = (await db('send_messages').where('kind', MESSAGE_KIND.system).where('id', '>', afterId).orderBy('id').limit(size).pluck('id')).map(Number);
      if (!ids.length) break;
      afterId = ids[ids.length - 1];
      deleted += Number(await db('send_messages').whereIn('id', ids).whereIn('state', FINAL_STATES).where('updated_at', '<', before).delete());
      if (ids.length < size) break;
    }
    return deleted;
  }

  return {
    /** The days each kind of data is kept (0: for ever), as the settings page shows them. */
    policy,

    /** One maintenance run: everything due is deleted, batch by batch. */
    async prune(options: PruneOptions = {}): Promise<PruneCounts> {
      const now = options.now ?? new Date();
      const size = options.batchSize ?? PRUNE_BATCH;
      const shouldStop = options.shouldStop ?? (() => false);
      const daysAgo = (days: number) => new Date(now.getTime() - days * DAY_MS).toISOString();
      const batches = (table: string, where: (q: Knex.QueryBuilder) => void) => untilDone(size, shouldStop, () => deleteSome(db, table, where, size));
      const days = policy();
      const counts: PruneCounts = { sessions: 0, signups: 0, webhookTokens: 0, signupMailSlots: 0, idempotencyKeys: 0, engagement: 0, messages: 0, webhookDeliveries: 0, auditEntries: 0, freedPages: 0 };

      counts.sessions = await batches('sessions', (q) => q.where('expires_at', '<', now.toISOString()));
      counts.signups = await batches('signups', (q) => q.whereNull('confirmed_at').where('expires_at', '<', new Date(now.getTime() - SIGNUP.keepExpiredMs).toISOString()));
      counts.webhookTokens = await batches('provider_webhook_tokens', (q) => q.where('expires_at', '<', now.toISOString()));
      counts.signupMailSlots = await batches('signup_mail_slots', (q) => q.where('taken_at', '<', now.getTime() - DAY_MS));
      counts.idempotencyKeys = await batches('idempotency_keys', (q) => q.where('created_at', '<', new Date(now.getTime() - TRANSACTIONAL_LIMITS.idempotencyHours * 3_600_000).toISOString()));
      if (days.events > 0 && !shouldStop()) counts.engagement = await pruneEngagement(db, { before: daysAgo(days.events) }, { now, batchSize: size, shouldStop });
      if (days.messages > 0 && !shouldStop()) counts.messages = await pruneMessages(daysAgo(days.messages), size, shouldStop);
      if (days.webhookDeliveries > 0 && !shouldStop()) {
        counts.webhookDeliveries = await batches('webhook_deliveries', (q) =>
          q.whereIn('state', [HOOK_DELIVERY_STATE.delivered, HOOK_DELIVERY_STATE.failed]).where('created_at', '<', daysAgo(days.webhookDeliveries)).orderBy('id'),
        );
      }
      if (config.auditRetentionDays > 0 && !shouldStop()) {
        counts.auditEntries = await batches('audit_log', (q) => q.where('created_at', '<', daysAgo(config.auditRetentionDays)));
      }
      const deleted = Object.values(counts).reduce((sum, n) => sum + n, 0);
      if (deleted > 0 && !shouldStop()) counts.freedPages = await releaseFreePages(db);
      if (deleted > 0) logger.info({ pruned: counts }, 'maintenance: old data pruned');
      return counts;
    },
  };
}

export type RetentionService = ReturnType<typeof createRetentionService>;
