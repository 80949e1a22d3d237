import type { Knex } from 'knex';

/**
 * Custom field names are unique per account regardless of case (`Age` and `age` would be
 * one placeholder `((age))` to a user). The first migration's index compares them exactly.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create unique index fields_custom_name_ci on fields (user_id, lower(field_name)) where user_id is not null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists fields_custom_name_ci');
}
