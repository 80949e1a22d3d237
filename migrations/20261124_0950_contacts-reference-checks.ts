import type { Knex } from 'knex';

/**
 * PostgreSQL: contacts lose their two foreign keys (to accounts and contact types) and the
 * single-column contact type index that only served them. Their triggers were half of an
 * import's database time (1,000,000 rows merged in 14.9 s with them, 7.2 s without), and they
 * only repeated what every writer already checks: the account is the authenticated one, and
 * the contact type is checked to be the account's and live before any contact is written
 * (a 422 otherwise). Neither accounts nor contact types are ever deleted (contact types are
 * soft-deleted together with their contacts), so the cascade never ran. Queries by contact type
 * all carry the account: the (user_id, contact_type_id) index serves them. SQLite keeps its
 * foreign keys: there they cost little and the import meets its target with them.
 */
export async function up(knex: Knex): Promise<void> {
  if (knex.client.config.client !== 'pg') return;
  await knex.raw('alter table contacts drop constraint if exists contacts_contact_type_id_foreign, drop constraint if exists contacts_user_id_foreign');
  await knex.raw('drop index if exists contacts_contact_type_id_index');
}

export async function down(knex: Knex): Promise<void> {
  if (knex.client.config.client !== 'pg') return;
  await knex.raw('create index if not exists contacts_contact_type_id_index on contacts (contact_type_id)');
  await knex.raw('alter table contacts add constraint contacts_user_id_foreign foreign key (user_id) references accounts (id) on delete cascade');
  await knex.raw('alter table contacts add constraint contacts_contact_type_id_foreign foreign key (contact_type_id) references contact_types (id)');
}
