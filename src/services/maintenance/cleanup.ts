import type { Knex } from 'knex';
import { toCount } from '../../db/dialect';
import { ValidationError } from '../../lib/errors';
import { isCalendarDate, utcToZoned, zonedToUtc } from '../../lib/zoned-time';
import type { ContactsService } from '../audience/contacts';
import type { Ctx, ServiceDeps } from '../context';
import { engagedMessages, PRUNE_BATCH, pruneEngagement } from './retention';

/** Days a contact must have been unsubscribed or bounced for at least and at most (a hundred years). */
export const LAPSED_DAYS = { min: 1, max: 36_500 } as const;
/** Suppression categories that mean the address bounced. */
const BOUNCED = ['hard_bounce', 'soft_bounce'];
const DAY_MS = 24 * 3600_000;

interface Deps extends Pick<ServiceDeps, 'db'> {
  contacts: Pick<ContactsService, 'removeMany'>;
}

/** What a clean-up would delete, or deleted. */
export interface CleanupCount {
  count: number;
}

/**
 * The account's clean-ups of its own data (the dashboard's Maintenance page): contacts that
 * unsubscribed from everything or bounced long ago, and opens and clicks before a date. Each
 * can be counted first, so the person deciding sees how much goes before it goes.
 */
export function createCleanupService({ db, contacts }: Deps) {
  function lapsedSince(days: unknown): string {
    const n = Number(days);
    if (typeof days === 'object' || !Number.isInteger(n) || n < LAPSED_DAYS.min || n > LAPSED_DAYS.max) {
      throw ValidationError.of('days', `Enter a whole number of days from ${LAPSED_DAYS.min} to ${LAPSED_DAYS.max}.`);
    }
    return new Date(Date.now() - n * DAY_MS).toISOString();
  }

  /** Live contacts of the account whose address unsubscribed from everything, or bounced, before `before`. */
  function lapsedContacts(userId: number, before: string): Knex.QueryBuilder {
    const unsubscribed = db('global_unsubscribes').where('user_id', userId).where('created_at', '<', before).select('email_key');
    const bounced = db('suppressed_addresses').where('user_id', userId).whereIn('category', BOUNCED).where('created_at', '<', before).select('email_key');
    return db('contacts')
      .where('user_id', userId)
      .whereNull('deleted_at')
      .where((q) => q.whereIn('email_key', unsubscribed).orWhereIn('email_key', bounced));
  }

  /** Midnight at the start of `date` in the account's time zone; the date may not be after tomorrow. */
  async function startOf(ctx: Ctx, date: unknown): Promise<string> {
    const text = typeof date === 'string' ? date.trim() : '';
    if (!isCalendarDate(text)) throw ValidationError.of('before', 'Enter a date such as 2026-01-31.');
    const account = await db('accounts').where('id', ctx.userId).first('time_zone');
    const zone = String(account?.time_zone ?? 'UTC');
    if (text > utcToZoned(new Date(Date.now() + DAY_MS), zone).date) throw ValidationError.of('before', 'Enter a date no later than tomorrow.');
    return zonedToUtc(text, '00:00:00', zone).toISOString();
  }

  return {
    /** How many contacts have been unsubscribed from everything, or bounced, for more than `days` days. */
    async countLapsedContacts(ctx: Ctx, days: unknown): Promise<CleanupCount> {
      const [row] = await lapsedContacts(ctx.userId, lapsedSince(days)).count({ n: '*' });
      return { count: toCount(row?.n) };
    },

    /** Deletes those contacts (as the contact delete does: from their segments too), a batch at a time. */
    async deleteLapsedContacts(ctx: Ctx, days: unknown): Promise<CleanupCount> {
      const before = lapsedSince(days);
      let count = 0;
      for (;;) {
        const ids = (await lapsedContacts(ctx.userId, before).orderBy('id').limit(PRUNE_BATCH).pluck('id')).map(Number);
        if (!ids.length) return { count };
        await contacts.removeMany(ctx, ids);
        count += ids.length;
      }
    },

    /** How many messages sent before the start of `before` (the account's time zone) have opens or clicks kept. */
    async countEngagement(ctx: Ctx, before: unknown): Promise<CleanupCount> {
      const [row] = await engagedMessages(db, { before: await startOf(ctx, before), userId: ctx.userId }).count({ n: '*' });
      return { count: toCount(row?.n) };
    },

    /** Deletes the opens and clicks of those messages; the totals of sends and automations stay. */
    async deleteEngagement(ctx: Ctx, before: unknown): Promise<CleanupCount> {
      return { count: await pruneEngagement(db, { before: await startOf(ctx, before), userId: ctx.userId }) };
    },
  };
}

export type CleanupService = ReturnType<typeof createCleanupService>;
