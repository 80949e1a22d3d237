import type { Knex } from 'knex';
import { nowValue, parseJson } from '../../../db/dialect';
import { isAutomatedOpen } from '../../../lib/automated-opens';
import { createSigner } from '../../../lib/signed-token';
import type { Ctx, ServiceDeps } from '../../context';
import { emitMessageEvents } from '../../integrations/hook-outbox';
import { moveCounters } from '../ledger';
import { MESSAGE_TOKEN, TrackedMessage, trackedMessages } from './tracked-message';

/** What the service learns from a request that opens or clicks: who fetched, and when. */
export interface Fetch {
  userAgent?: string;
  at?: Date;
}

/**
 * What recipients do with a message's content: open it (the pixel) and follow its links.
 * Every entry point takes the signed token of the message's links (see tracked-message.ts).
 * The preference page and unsubscribes are preferences.ts.
 */
interface Deps extends Pick<ServiceDeps, 'db' | 'secret'> {
  /** Called in the transaction of a message's first open or first click: engagement segments follow. */
  engaged?: (ctx: Ctx, emailKey: string, trx: Knex.Transaction) => Promise<void>;
}

export function createTrackingService({ db, secret, engaged }: Deps) {
  const announce = async (trx: Knex.Transaction, message: TrackedMessage) => engaged?.({ userId: Number(message.user_id) }, message.email_key, trx);
  const signer = createSigner(secret);
  const messageOf = trackedMessages(secret);

  /**
   * Counts an open: every open adds to total_opens, the first of a message to unique_opens
   * (and makes it the n-th entry of unique_open_token), the first not made by a proxy or
   * scanner to the opens excluding automated ones.
   */
  async function countOpen(trx: Knex.Transaction, message: TrackedMessage, fetch: Fetch, now: string): Promise<void> {
    const deliveredAt = message.sent_at ? new Date(message.sent_at as string) : null;
    const automated = isAutomatedOpen({ userAgent: fetch.userAgent, deliveredAt, at: fetch.at ?? new Date(now) });
    // A message whose engagement was pruned had its first open counted already: not again.
    const kept = () => trx('send_messages').where({ id: message.id }).whereNull('engagement_pruned_at');
    const first = await kept().whereNull('opened_at').update({ opened_at: now, updated_at: now });
    const human = automated ? 0 : await kept().whereNull('human_opened_at').update({ human_opened_at: now });
    // message.opened: the first open of a message (as unique_opens counts it).
    if (first) await emitMessageEvents(trx, 'message.opened', [{ messageId: message.id, userId: Number(message.user_id), extra: { automated } }], now);
    const send = await moveCounters(trx, message, { opened: 1, openedFirst: first, openedByPerson: human });
    if (first && send) await trx('send_messages').where({ id: message.id }).update({ open_seq: send.openedFirst });
    if (first) await announce(trx, message);
  }

  /**
   * Link n of a transactional message: its links are its own (stored with it when it was built),
   * with no per-link counters (`id` null).
   */
  async function transactionalLinkOf(trx: Knex, message: TrackedMessage, n: number): Promise<{ id: number | null; url: string } | undefined> {
    const row = await trx('transactional_messages').where({ id: message.id }).first('links');
    const url = parseJson<string[]>(row?.links, [])[n - 1];
    return url ? { id: null, url } : undefined;
  }

  /** Link n of the message's send or automation step. */
  async function linkOf(trx: Knex, message: TrackedMessage, n: number): Promise<{ id: number | null; url: string } | undefined> {
    if (!Number.isSafeInteger(n) || n < 1 || n > 2147483647) return undefined;
    const owner = message.single_send_id ? { single_send_id: message.single_send_id } : message.automation_schedule_id ? { automation_schedule_id: message.automation_schedule_id } : undefined;
    if (!owner) return transactionalLinkOf(trx, message, n);
    // A step's message resolves only the numbers of the content it was sent with: its step's
    // links of other versions (earlier or later edits) are not its links.
    if (message.link_version_id !== null && message.link_version_id !== undefined) {
      const version = await trx('link_versions').where({ id: message.link_version_id }).first('numbers');
      if (!version || !(JSON.parse(String(version.numbers)) as number[]).includes(n)) return undefined;
    }
    const row = await trx('send_links').where({ ...owner, n }).first('id', 'url');
    return row ? { id: Number(row.id), url: String(row.url) } : undefined;
  }

  return {
    /**
     * Counts an open: every open adds to total_opens, the first of a message to unique_opens,
     * and that message becomes the n-th entry of unique_open_token. False for a bad token.
     */
    async recordOpen(token: string, fetch: Fetch = {}): Promise<boolean> {
      return db.transaction(async (trx) => {
        const message = await messageOf(trx, token);
        if (!message) return false;
        await countOpen(trx, message, fetch, nowValue());
        return true;
      });
    },

    /**
     * A click on link n of a message: answers the URL stored for that link of the message's
     * send (or automation step), never one from the request; undefined for a forged token or a
     * link the send does not have. Counts the click (unique per message, per link and in
     * total) and, when the message has no open yet, an open too.
     */
    async recordClick(token: string, n: number, fetch: Fetch = {}): Promise<string | undefined> {
      return db.transaction(async (trx) => {
        const message = await messageOf(trx, token);
        if (!message) return undefined;
        const link = await linkOf(trx, message, n);
        if (!link) return undefined;
        const now = nowValue();
        const plus = (column: string, by: number) => trx.raw('?? + ?', [column, by]);
        // A message whose engagement was pruned had its unique clicks counted already: totals only.
        const pruned = message.engagement_pruned_at !== null && message.engagement_pruned_at !== undefined;
        const inserted = pruned || link.id === null
          ? []
          : await trx('link_clicks')
              .insert({ link_id: link.id, message_id: message.id, clicks: 1, first_at: now, last_at: now })
              .onConflict(['link_id', 'message_id'])
              .ignore()
              .returning('link_id');
        let firstOfLink = inserted.length > 0 ? 1 : 0;
        if (link.id !== null) {
          if (!firstOfLink && !pruned) await trx('link_clicks').where({ link_id: link.id, message_id: message.id }).update({ clicks: plus('clicks', 1), last_at: now });
          await trx('send_links').where({ id: link.id }).update({ total_clicks: plus('total_clicks', 1), unique_clicks: plus('unique_clicks', firstOfLink) });
        }
        const first = pruned ? 0 : await trx('send_messages').where({ id: message.id }).whereNull('clicked_at').update({ clicked_at: now });
        // A transactional message's links have no rows of their own: its first click is reported.
        if (link.id === null) firstOfLink = first ? 1 : 0;
        // message.clicked: the first click of each link of a message (as unique clicks count it).
        if (firstOfLink) await emitMessageEvents(trx, 'message.clicked', [{ messageId: message.id, userId: Number(message.user_id), extra: { url: link.url } }], now);
        await moveCounters(trx, message, { clicked: 1, clickedFirst: first });
        if (!message.opened_at && !pruned) await countOpen(trx, message, fetch, now);
        if (first) await announce(trx, message);
        return link.url;
      });
    },

    /** The URL of link n of a message, counting nothing (a click whose recording failed still goes there). */
    async linkUrl(token: string, n: number): Promise<string | undefined> {
      const message = await messageOf(db, token);
      return message ? (await linkOf(db, message, n))?.url : undefined;
    },

    /** unique_open_token of single sends: the n-th unique open (from 1) → that message's token. */
    async uniqueOpenTokens(sendIds: number[]): Promise<Map<number, Record<string, string>>> {
      const result = new Map<number, Record<string, string>>(sendIds.map((id) => [id, {}]));
      if (!sendIds.length) return result;
      const rows = await db('send_messages')
        .whereIn('single_send_id', sendIds)
        .whereNotNull('open_seq')
        .orderBy('open_seq')
        .select('id', 'single_send_id', 'open_seq');
      for (const row of rows) {
        result.get(Number(row.single_send_id))![String(row.open_seq)] = signer.sign(MESSAGE_TOKEN, Number(row.id));
      }
      return result;
    },
  };
}

export type TrackingService = ReturnType<typeof createTrackingService>;
