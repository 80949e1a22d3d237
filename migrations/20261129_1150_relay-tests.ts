import type { Knex } from 'knex';

/**
 * `relays.tested_at` and `relays.test_ok`: when the account last tested the relay (connected and
 * logged in, sending nothing) and whether that worked, so a relay nobody tried yet says so
 * rather than "Working".
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('relays', (t) => {
    t.timestamp('tested_at', { useTz: true, precision: 6 }).nullable();
    t.smallint('test_ok').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('relays', (t) => {
    t.dropColumn('tested_at');
    t.dropColumn('test_ok');
  });
}
