import type { Knex } from 'knex';

/**
 * What a crash and a final failure leave behind.
 * - `send_messages.unconfirmed`: how many times a worker began handing the message to the SMTP
 *   server without recording how that ended (it died meanwhile). 1 means it may have gone out
 *   once, so a new owner sends it again; 2 means it may have gone out twice, and it is not sent
 *   a third time. Recording an outcome sets it back to 0.
 * - `single_sends.failed` and `automations.total_failed`: messages given up (state failed),
 *   counted in the same transaction as the ledger change, like `delivered` and `bounces`.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('send_messages', (t) => {
    t.smallint('unconfirmed').notNullable().defaultTo(0);
  });
  await knex.schema.alterTable('single_sends', (t) => {
    t.integer('failed').notNullable().defaultTo(0);
  });
  await knex.schema.alterTable('automations', (t) => {
    t.integer('total_failed').notNullable().defaultTo(0);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('automations', (t) => t.dropColumn('total_failed'));
  await knex.schema.alterTable('single_sends', (t) => t.dropColumn('failed'));
  await knex.schema.alterTable('send_messages', (t) => t.dropColumn('unconfirmed'));
}
