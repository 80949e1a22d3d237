import type { Knex } from 'knex';

/**
 * A live contact type's name is unique per account ignoring case (like custom field names),
 * so no picker shows two identical options. Names are stored trimmed.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create unique index contact_types_name_live on contact_types (user_id, lower(name)) where deleted_at is null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists contact_types_name_live');
}
