import type { Knex } from 'knex';

/**
 * A resend to non-openers keeps its audience as a reference, not a list: `single_sends.resend_of`
 * is the id of the send whose ledger it is drawn from when it starts (its messages that were
 * delivered and not opened by a person, less whoever unsubscribed, was suppressed or bounced
 * since). Null for every other send. No foreign key: SQLite would rebuild the table to add one,
 * and sends are soft-deleted, so the referenced row never goes away while its account lives.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('single_sends', (t) => {
    t.integer('resend_of').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('single_sends', (t) => t.dropColumn('resend_of'));
}
