import type { Knex } from 'knex';

/**
 * On PostgreSQL the rate-limit rows skip the write-ahead log. Every API request updates its key's
 * window row, so concurrent requests queue on that row's lock, and with a logged table each
 * holds the lock until its commit is flushed to disk: that flush capped the API near one request
 * per disk flush. A window or a mail slot lost in a crash only restarts a limit, so these rows
 * need no crash safety. SQLite has no such tables.
 */
export async function up(knex: Knex): Promise<void> {
  if (knex.client.config.client !== 'pg') return;
  await knex.raw('alter table api_rate_windows set unlogged');
  await knex.raw('alter table mail_rate_slots set unlogged');
}

export async function down(knex: Knex): Promise<void> {
  if (knex.client.config.client !== 'pg') return;
  await knex.raw('alter table api_rate_windows set logged');
  await knex.raw('alter table mail_rate_slots set logged');
}
