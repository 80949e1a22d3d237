import type { Knex } from 'knex';

/**
 * The (user_id, contact_type_id) index of contacts gains deleted_at: the contacts_count of
 * `GET /contacts-type` (a count of each type's live contacts) is then read from the index
 * alone instead of visiting every contact of the account to see whether it is deleted. On an
 * account of 20,000 contacts in ten types the list took 4.8–6.5 ms on SQLite, 0.6–1.1 ms with
 * this index; on PostgreSQL 11–14 ms (a bitmap heap scan), 2.9–3.4 ms (an index-only scan).
 * Still a full index (not partial), so every query by account and type, and SQLite's
 * foreign-key checks by account, keep using it; an import maintains one index as before.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index contacts_user_type_deleted on contacts (user_id, contact_type_id, deleted_at)');
  await knex.raw('drop index contacts_user_id_contact_type_id_index');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('create index contacts_user_id_contact_type_id_index on contacts (user_id, contact_type_id)');
  await knex.raw('drop index contacts_user_type_deleted');
}
