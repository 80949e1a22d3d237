import type { Knex } from 'knex';

/**
 * `single_sends.resent_as`: the id of the resend to non-openers made of this send. A resend is
 * made only by the guarded update that sets it (while it is null or names a deleted resend), in
 * the transaction that inserts the resend, so one send has one live resend however many requests
 * and processes ask at once. Null for sends never resent (and for those resent before this column).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('single_sends', (t) => {
    t.integer('resent_as').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('single_sends', (t) => t.dropColumn('resent_as'));
}
