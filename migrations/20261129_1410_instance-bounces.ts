import type { Knex } from 'knex';

/**
 * The instance's bounce list (INSTANCE_BOUNCE_LIST): addresses that hard-bounced in any account,
 * kept only as a keyed hash (HMAC under a key derived from the app secret), so the table names
 * no address and no account; `bounced_at` is the last hard bounce, from which the 30 days run.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('instance_bounces', (t) => {
    t.string('address_hash', 64).primary();
    t.timestamp('bounced_at', { useTz: true, precision: 6 }).notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('instance_bounces');
}
