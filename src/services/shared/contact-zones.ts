import type { Knex } from 'knex';

/**
 * A contact's time zone, the one rule for it: its own `time_zone`; else, in a country that
 * spans several zones, its state's (the `state` or `state_province_region` text, by name or
 * code); else its country's; else the account's. Country and state zones are reference data
 * (seeds/time-zones.ts). Adds the left joins to `query`, whose rows carry the contact's id in
 * `contactId` (null for an address without a contact), and answers the zone as an SQL
 * expression, so a whole audience's zones are read in the statement that lists it.
 */
export function joinContactZone(db: Knex, query: Knex.QueryBuilder, contactId: string, accountZone: string): Knex.Raw {
  query
    .leftJoin('contacts as zc', 'zc.id', contactId)
    .leftJoin('countries as zco', 'zco.id', 'zc.country')
    .leftJoin('states as zs', (on) =>
      on
        .on('zs.country_id', 'zc.country')
        .andOnNotNull('zs.time_zone')
        .andOn(db.raw('(lower(zc.state) in (lower(zs.name), lower(zs.iso2)) or lower(zc.state_province_region) in (lower(zs.name), lower(zs.iso2)))')),
    );
  return db.raw("coalesce(nullif(zc.time_zone, ''), zs.time_zone, zco.time_zone, ?)", [accountZone]);
}

/** The zone a send would use for one contact of the account (the dashboard shows it beside an empty zone). */
export async function contactZone(db: Knex, userId: number, contactId: number): Promise<string> {
  const account = await db('accounts').where({ id: userId }).first('time_zone');
  const query = db.from(db('contacts').where({ id: contactId, user_id: userId }).select('id').as('t'));
  const zone = joinContactZone(db, query, 't.id', String(account?.time_zone ?? 'UTC'));
  const row = await query.first(db.raw('? as zone', [zone]));
  return String(row?.zone ?? account?.time_zone ?? 'UTC');
}
