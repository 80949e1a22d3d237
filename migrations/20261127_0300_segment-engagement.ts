import type { Knex } from 'knex';

/**
 * Segment engagement conditions on any send (`engagement opened any`) look up a contact's
 * messages by account and address; a chosen send's use `send_messages_single_once`.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index send_messages_user_email on send_messages (user_id, email_key)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists send_messages_user_email');
}
