import type { Knex } from 'knex';

/**
 * Who made each API key: `made_by` is the person responsible for it (`team_users.id`; a key made
 * with another key belongs to that key's maker), null when it was made with the account's
 * original pair or before makers were recorded; `made_by_name` is the name the keys page shows.
 * No foreign key: removing a person revokes their keys in the service, with an audit entry.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_keys', (t) => {
    t.integer('made_by').nullable();
    t.string('made_by_name', 255).nullable();
    t.index(['user_id', 'made_by']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_keys', (t) => {
    t.dropIndex(['user_id', 'made_by']);
    t.dropColumn('made_by_name');
    t.dropColumn('made_by');
  });
}
