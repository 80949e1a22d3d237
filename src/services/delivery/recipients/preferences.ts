import type { Knex } from 'knex';
import { nowValue } from '../../../db/dialect';
import type { ServiceDeps } from '../../context';
import { emitHookEvents } from '../../integrations/hook-outbox';
import { addUnsubscribers } from '../../shared/unsubscribers';
import { countUnsubscribe } from '../ledger';
import { TrackedMessage, trackedMessages } from './tracked-message';

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

/**
 * What recipients choose about the mail they get: the preference page (stay in or leave the
 * account's shown groups, or everything) and RFC 8058 one-click unsubscribe. Every entry point
 * takes the signed token of the message's links (see tracked-message.ts).
 */
export function createPreferencesService({ db, secret }: Pick<ServiceDeps, 'db' | 'secret'>) {
  const messageOf = trackedMessages(secret);

  /** contact.unsubscribed: the address left these groups (null: everything the account sends). */
  async function announceUnsubscribe(trx: Knex.Transaction, message: TrackedMessage, groupIds: Array<number | null>, source: string, now: string): Promise<void> {
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
  async function addUnsubscriber(trx: Knex.Transaction, message: TrackedMessage, groupId: number | null, now: string): Promise<boolean> {
    return (await addUnsubscribers(trx, { userId: Number(message.user_id), groupId }, [message.email], now)) > 0;
  }

  /** The account's groups shown on preference pages, plus the message's own group. */
  async function shownGroups(trx: Knex, message: TrackedMessage): Promise<Array<{ id: number; group_name: string; description: string }>> {
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
    /** What the preference page shows, or undefined for a bad token. Changes nothing. */
    async of(token: string): Promise<Preferences | undefined> {
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
      // Unsubscribed from all, the address gets no group's mail either: no group shows ticked.
      return {
        email: message.email,
        groups: groups.map((g) => ({ id: Number(g.id), group_name: g.group_name, description: g.description, subscribed: !global && !left.has(Number(g.id)) })),
        globallyUnsubscribed: Boolean(global),
      };
    },

    /** Applies the preference page's form; false for a bad token. */
    async apply(token: string, choice: PreferenceChoice): Promise<boolean> {
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
  };
}

export type PreferencesService = ReturnType<typeof createPreferencesService>;
