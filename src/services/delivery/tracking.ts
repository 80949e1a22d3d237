import type { Knex } from 'knex';
import { nowValue } from '../../db/dialect';
import { isAutomatedOpen } from '../../lib/automated-opens';
import { createSigner, TOKEN_PURPOSE } from '../../lib/signed-token';
import type { ServiceDeps } from '../context';
import { emitHookEvents, emitMessageEvents } from '../integrations/hook-outbox';
import { addUnsubscribers } from '../audience/unsubscribers';
import { countUnsubscribe, moveCounters } from './counters';

const MESSAGE_TOKEN = TOKEN_PURPOSE.message;

export interface PreferenceGroup {
  id: number;
  group_name: string;
  description: string;
  subscribed: boolean;
}

export interface Preferences {
  email: string;
  groups: PreferenceGroup[];
  /** Unsubscribed from everything the account sends. */
  globallyUnsubscribed: boolean;
}

export interface PreferenceChoice {
  /** Ids of the shown groups the recipient stays subscribed to; the others are unsubscribed. */
  subscribedGroupIds: number[];
  unsubscribeAll: boolean;
}

interface Message {
  id: number;
  user_id: number;
  email: string;
  email_key: string;
  single_send_id: number | null;
  automation_id: number | null;
  automation_schedule_id: number | null;
  contact_id: number | null;
  sent_at: unknown;
  opened_at: unknown;
  unsubscribed_at: unknown;
  group_id: number | null;
}

/** What the service learns from a request that opens or clicks: who fetched, and when. */
export interface Fetch {
  userAgent?: string;
  at?: Date;
}

/**
 * What recipients do with a message: open it (the pixel), change their preferences and
 * unsubscribe (the preference page and one-click). Every entry point takes the signed token
 * of the message's links; a forged or edited token finds nothing and changes nothing.
 */
export function createTrackingService({ db, secret }: Pick<ServiceDeps, 'db' | 'secret'>) {
  const signer = createSigner(secret);

  async function messageOf(trx: Knex, token: string): Promise<Message | undefined> {
    const id = signer.verify(MESSAGE_TOKEN, token);
    if (id === undefined) return undefined;
    const row = await trx('send_messages as m')
      .leftJoin('single_sends as s', 's.id', 'm.single_send_id')
      .leftJoin('automations as a', 'a.id', 'm.automation_id')
      .where('m.id', id)
      .first(
        'm.id', 'm.user_id', 'm.email', 'm.email_key', 'm.single_send_id', 'm.automation_id', 'm.automation_schedule_id', 'm.contact_id', 'm.sent_at',
        'm.opened_at', 'm.unsubscribed_at',
        trx.raw('coalesce(s.unsubscribe_group_id, a.unsubscribe_group_id) as group_id'),
      );
    return row ? { ...row, group_id: row.group_id === null ? null : Number(row.group_id) } : undefined;
  }

  /**
   * Counts an open: every open adds to total_opens, the first of a message to unique_opens
   * (and makes it the n-th entry of unique_open_token), the first not made by a proxy or
   * scanner to the opens excluding automated ones.
   */
  async function countOpen(trx: Knex.Transaction, message: Message, fetch: Fetch, now: string): Promise<void> {
    const deliveredAt = message.sent_at ? new Date(message.sent_at as string) : null;
    const automated = isAutomatedOpen({ userAgent: fetch.userAgent, deliveredAt, at: fetch.at ?? new Date(now) });
    const first = await trx('send_messages').where({ id: message.id }).whereNull('opened_at').update({ opened_at: now, updated_at: now });
    const human = automated ? 0 : await trx('send_messages').where({ id: message.id }).whereNull('human_opened_at').update({ human_opened_at: now });
    // message.opened: the first open of a message (as unique_opens counts it).
    if (first) await emitMessageEvents(trx, 'message.opened', [{ messageId: message.id, userId: Number(message.user_id), extra: { automated } }], now);
    const send = await moveCounters(trx, message, { opened: 1, openedFirst: first, openedByPerson: human });
    if (first && send) await trx('send_messages').where({ id: message.id }).update({ open_seq: send.openedFirst });
  }

  /** contact.unsubscribed: the address left these groups (null: everything the account sends). */
  async function announceUnsubscribe(trx: Knex.Transaction, message: Message, groupIds: Array<number | null>, source: string, now: string): Promise<void> {
    if (!groupIds.length) return;
    const data = {
      email: message.email,
      contact_id: message.contact_id === null ? null : Number(message.contact_id),
      global: groupIds.includes(null),
      unsubscribe_group_ids: groupIds.filter((id): id is number => id !== null),
      message_id: message.id,
      source,
    };
    await emitHookEvents(trx, 'contact.unsubscribed', [Number(message.user_id)], () => [{ userId: Number(message.user_id), data, contactKey: message.email_key }], now);
  }

  /** Adds the address to a group's recipients (or the global unsubscribers); true when it was not there yet. */
  async function addUnsubscriber(trx: Knex.Transaction, message: Message, groupId: number | null, now: string): Promise<boolean> {
    return (await addUnsubscribers(trx, { userId: Number(message.user_id), groupId }, [message.email], now)) > 0;
  }

  /** Link n of the message's send or automation step. */
  async function linkOf(trx: Knex, message: Message, n: number): Promise<{ id: number; url: string } | undefined> {
    if (!Number.isSafeInteger(n) || n < 1 || n > 2147483647) return undefined;
    const owner = message.single_send_id ? { single_send_id: message.single_send_id } : message.automation_schedule_id ? { automation_schedule_id: message.automation_schedule_id } : undefined;
    if (!owner) return undefined;
    const row = await trx('send_links').where({ ...owner, n }).first('id', 'url');
    return row ? { id: Number(row.id), url: String(row.url) } : undefined;
  }

  /** The account's groups shown on preference pages, plus the message's own group. */
  async function shownGroups(trx: Knex, message: Message): Promise<Array<{ id: number; group_name: string; description: string }>> {
    return trx('unsubscribe_groups')
      .where({ user_id: message.user_id })
      .where((q) => {
        q.where({ is_display: 1 });
        if (message.group_id) q.orWhere({ id: message.group_id });
      })
      .orderBy('id')
      .select('id', 'group_name', 'description');
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
        const inserted = await trx('link_clicks')
          .insert({ link_id: link.id, message_id: message.id, clicks: 1, first_at: now, last_at: now })
          .onConflict(['link_id', 'message_id'])
          .ignore()
          .returning('link_id');
        const firstOfLink = inserted.length > 0 ? 1 : 0;
        if (!firstOfLink) await trx('link_clicks').where({ link_id: link.id, message_id: message.id }).update({ clicks: plus('clicks', 1), last_at: now });
        await trx('send_links').where({ id: link.id }).update({ total_clicks: plus('total_clicks', 1), unique_clicks: plus('unique_clicks', firstOfLink) });
        const first = await trx('send_messages').where({ id: message.id }).whereNull('clicked_at').update({ clicked_at: now });
        // message.clicked: the first click of each link of a message (as unique clicks count it).
        if (firstOfLink) await emitMessageEvents(trx, 'message.clicked', [{ messageId: message.id, userId: Number(message.user_id), extra: { url: link.url } }], now);
        await moveCounters(trx, message, { clicked: 1, clickedFirst: first });
        if (!message.opened_at) await countOpen(trx, message, fetch, now);
        return link.url;
      });
    },

    /** The URL of link n of a message, counting nothing (a click whose recording failed still goes there). */
    async linkUrl(token: string, n: number): Promise<string | undefined> {
      const message = await messageOf(db, token);
      return message ? (await linkOf(db, message, n))?.url : undefined;
    },

    /** What the preference page shows, or undefined for a bad token. Changes nothing. */
    async preferences(token: string): Promise<Preferences | undefined> {
      const message = await messageOf(db, token);
      if (!message) return undefined;
      const groups = await shownGroups(db, message);
      const left = new Set(
        (
          await db('unsubscribe_group_recipients')
            .whereIn('unsubscribe_groups_id', groups.map((g) => g.id))
            .where({ email_key: message.email_key })
            .select('unsubscribe_groups_id')
        ).map((r) => Number(r.unsubscribe_groups_id)),
      );
      const global = await db('global_unsubscribes').where({ user_id: message.user_id, email_key: message.email_key }).first('id');
      return {
        email: message.email,
        groups: groups.map((g) => ({ id: Number(g.id), group_name: g.group_name, description: g.description, subscribed: !left.has(Number(g.id)) })),
        globallyUnsubscribed: Boolean(global),
      };
    },

    /** Applies the preference page's form; false for a bad token. */
    async applyPreferences(token: string, choice: PreferenceChoice): Promise<boolean> {
      return db.transaction(async (trx) => {
        const message = await messageOf(trx, token);
        if (!message) return false;
        const now = nowValue();
        const keep = new Set(choice.subscribedGroupIds);
        const left: Array<number | null> = [];
        for (const group of await shownGroups(trx, message)) {
          const id = Number(group.id);
          if (keep.has(id)) {
            await trx('unsubscribe_group_recipients').where({ unsubscribe_groups_id: id, email_key: message.email_key }).delete();
          } else if (await addUnsubscriber(trx, message, id, now)) {
            left.push(id);
          }
        }
        if (choice.unsubscribeAll) {
          if (await addUnsubscriber(trx, message, null, now)) left.push(null);
        } else {
          await trx('global_unsubscribes').where({ user_id: message.user_id, email_key: message.email_key }).delete();
        }
        if (left.length) await countUnsubscribe(trx, message, now);
        await announceUnsubscribe(trx, message, left, 'preference_page', now);
        return true;
      });
    },

    /**
     * RFC 8058 one-click: leaves the message's unsubscribe group (everything, when the message
     * has no group). False for a bad token.
     */
    async oneClickUnsubscribe(token: string): Promise<boolean> {
      return db.transaction(async (trx) => {
        const message = await messageOf(trx, token);
        if (!message) return false;
        const now = nowValue();
        const changed = await addUnsubscriber(trx, message, message.group_id, now);
        if (changed) await countUnsubscribe(trx, message, now);
        if (changed) await announceUnsubscribe(trx, message, [message.group_id], 'one_click', now);
        return true;
      });
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
