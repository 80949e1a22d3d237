import type { Knex } from 'knex';
import { typedParam } from '../../../db/typed-param';
import { zonedToUtc } from '../../../lib/zoned-time';
import { joinContactZone } from '../../shared/contact-zones';
import { toCount } from '../../../db/dialect';

export interface LocalTimeSend {
  user_id: number;
  schedule_date?: unknown;
  schedule_time?: unknown;
}

/**
 * The due time of each ledger row of a send on each recipient's own clock (`schedule_type` 2),
 * as an SQL expression over `recipients` (rows under the alias `t`, see recipientsOf): the
 * instant its date and time happen in the recipient's zone, or `now` where that has passed
 * already. The zones are read set-based (one DISTINCT over the audience: a few hundred at most),
 * their instants computed here, and each row picks its own in the INSERT … SELECT, so nothing
 * held in memory grows with the list. The worker claims a row only once it is due.
 */
export async function localDueTimes(trx: Knex.Transaction, send: LocalTimeSend, recipients: Knex.QueryBuilder, now: string): Promise<{ dueAt: Knex.Raw }> {
  const account = await trx('accounts').where({ id: send.user_id }).first('time_zone');
  const zone = joinContactZone(trx, recipients, 't.contact_id', String(account?.time_zone ?? 'UTC'));
  const zones: string[] = (await recipients.clone().clearSelect().distinct(trx.raw('? as zone', [zone]))).map((row: { zone: string }) => String(row.zone));
  const nowMs = Date.parse(now);
  const dueIn = (name: string) => {
    const at = zonedToUtc(String(send.schedule_date), String(send.schedule_time), name).getTime();
    return typedParam(trx, new Date(Math.max(nowMs, at)).toISOString(), 'timestamptz');
  };
  const cases = zones.map(() => 'when ? then ?').join(' ');
  // Wrapped: a knex Raw is thenable, and an async function would run it instead of answering it.
  return { dueAt: trx.raw(`case ? ${cases} else ? end`, [zone, ...zones.flatMap((name) => [name, dueIn(name)]), typedParam(trx, now, 'timestamptz')]) };
}

/** How a send on each recipient's clock would go if started now: the zones of its audience and when its messages leave. */
export interface LocalTimePlan {
  /** Recipients whose contact has no zone of its own, nor one from its state or country. */
  withoutZone: number;
  /** The zone they get: the account's. */
  accountZone: string;
  /** When the first and the last messages go (a time already passed somewhere: at once). */
  first: string | null;
  last: string | null;
}

/**
 * The plan of a send with `schedule_type` 2 as it stands now: one grouped statement over its
 * audience (`recipients`, see recipientsOf; the zone rule of joinContactZone, with no fallback, so a contact without a zone
 * shows as such), then each zone's instant as localDueTimes computes it.
 */
export async function localTimePlan(db: Knex, send: LocalTimeSend, recipients: Knex.QueryBuilder | undefined, now: Date): Promise<LocalTimePlan> {
  const account = await db('accounts').where({ id: send.user_id }).first('time_zone');
  const accountZone = String(account?.time_zone ?? 'UTC');
  if (!recipients) return { withoutZone: 0, accountZone, first: null, last: null };
  const zone = joinContactZone(db, recipients, 't.contact_id', '');
  const rows: { zone: string; n: unknown }[] = await recipients.clearSelect().select(db.raw('? as zone', [zone])).countDistinct({ n: 't.email_key' }).groupByRaw('1');
  const instants = rows.map((row) => Math.max(now.getTime(), zonedToUtc(String(send.schedule_date), String(send.schedule_time), String(row.zone) || accountZone).getTime()));
  const at = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  return {
    withoutZone: toCount(rows.find((row) => String(row.zone) === '')?.n),
    accountZone,
    first: at(instants.length ? Math.min(...instants) : undefined),
    last: at(instants.length ? Math.max(...instants) : undefined),
  };
}
