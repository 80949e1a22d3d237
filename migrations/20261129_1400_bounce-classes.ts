import type { Knex } from 'knex';

/**
 * `bounce_class` on ledger messages (their last refusal: hard, mailbox_full, policy, soft or
 * other, see src/lib/bounce-class.ts) and on suppressed addresses (the refusal that suppressed
 * them). Not indexed: it changes with an outcome, and the reports filter it within one send.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('send_messages', (t) => {
    t.string('bounce_class', 16).nullable();
  });
  await knex.schema.alterTable('suppressed_addresses', (t) => {
    t.string('bounce_class', 16).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('suppressed_addresses', (t) => t.dropColumn('bounce_class'));
  await knex.schema.alterTable('send_messages', (t) => t.dropColumn('bounce_class'));
}
