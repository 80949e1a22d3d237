import type { Knex } from 'knex';

/**
 * The ledger id of a sender's latest verification mail. The mail is stored without its link;
 * the link's token is made when the mail goes out, and only for this message (an older one
 * still queued for a retry is void), with only its sha256 kept in `verify_token_hash`.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('senders', (t) => {
    t.integer('verify_message_id').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('senders', (t) => {
    t.dropColumn('verify_message_id');
  });
}
