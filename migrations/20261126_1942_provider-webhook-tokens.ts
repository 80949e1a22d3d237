import type { Knex } from 'knex';

/**
 * The signature tokens of provider webhooks seen lately (Mailgun signs only a timestamp and a
 * token, not the event): one row per token, kept past the time its timestamp is accepted, so a
 * captured signature cannot be posted twice by any process. The primary key makes the check
 * one insert; rows past `expires_at` are deleted as new tokens arrive.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('provider_webhook_tokens', (t) => {
    t.string('provider', 20).notNullable();
    t.string('token', 200).notNullable();
    t.timestamp('expires_at', { useTz: true, precision: 6 }).notNullable();
    t.primary(['provider', 'token']);
    t.index(['expires_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('provider_webhook_tokens');
}
