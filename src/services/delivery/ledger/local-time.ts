import type { Knex } from 'knex';
import { typedParam } from '../../../db/typed-param';
import { zonedToUtc } from '../../../lib/zoned-time';
import { joinContactZone } from '../../shared/contact-zones';

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
  // Nobody to write (a batch whose every address is left out): a CASE needs at least one WHEN.
  if (!zones.length) return { dueAt: trx.raw('?', [typedParam(trx, now, 'timestamptz')]) };
  const cases = zones.map(() => 'when ? then ?').join(' ');
  // Wrapped: a knex Raw is thenable, and an async function would run it instead of answering it.
  return { dueAt: trx.raw(`case ? ${cases} else ? end`, [zone, ...zones.flatMap((name) => [name, dueIn(name)]), typedParam(trx, now, 'timestamptz')]) };
}
