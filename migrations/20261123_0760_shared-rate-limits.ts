import type { Knex } from 'knex';

/**
 * Rate limits counted in the database, so every process (any number of web servers and sending
 * workers on PostgreSQL) draws from one limit instead of each from its own:
 * - `mail_rate_slots`: per account, the earliest time (ms since the epoch) the next message may
 *   go under MAIL_RATE; each message reserves a slot and moves it on by 1/MAIL_RATE s.
 * - `api_rate_windows`: per key pair, the current fixed window of API_RATE_LIMIT and its hits.
 * One row per account or key pair, overwritten in place: the tables do not grow with use.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('mail_rate_slots', (t) => {
    t.integer('user_id').primary();
    t.double('next_at').notNullable();
  });
  await knex.schema.createTable('api_rate_windows', (t) => {
    t.string('key', 160).primary();
    t.bigInteger('window_start').notNullable();
    t.integer('hits').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('api_rate_windows');
  await knex.schema.dropTableIfExists('mail_rate_slots');
}
