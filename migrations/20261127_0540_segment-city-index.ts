import type { Knex } from 'knex';

/**
 * On PostgreSQL, a btree over each account's live contacts by type and lowercased city, for
 * segment rules on the city: they are compiled as `lower(c.city) like lower(?)` there (what
 * ILIKE computes), which this index serves for `is` and `starts with`, so a count or a fill
 * reads the matching contacts' rows instead of every row of the type. (Rules on the email use
 * its trigram index; rules on custom fields, kept in one JSON column, have no index to use.)
 * `text_pattern_ops`: a prefix LIKE can use it whatever the database's collation.
 *
 * SQLite reads the type's rows for every rule, as it always has: nothing to do there.
 */
export async function up(knex: Knex): Promise<void> {
  if (knex.client.config.client !== 'pg') return;
  await knex.raw('create index contacts_user_type_city on contacts (user_id, contact_type_id, lower(city) text_pattern_ops) where deleted_at is null');
}

export async function down(knex: Knex): Promise<void> {
  if (knex.client.config.client !== 'pg') return;
  await knex.raw('drop index if exists contacts_user_type_city');
}
