import type { Knex } from 'knex';

/**
 * What an A/B test's decision was made on, kept once the winner goes to the rest:
 * `ab_tests.chosen_by` (`rule` or `hand`), each variant's figures at that moment
 * (`ab_variants.decided_*`), and `send_messages.ab_rest` (1 on the rest's messages, which carry
 * the winner's index), so the rest's figures can be shown apart from the test's.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('ab_tests', (t) => {
    t.string('chosen_by', 8).nullable();
  });
  await knex.schema.alterTable('ab_variants', (t) => {
    t.integer('decided_triggered').nullable();
    t.integer('decided_delivered').nullable();
    t.integer('decided_opens').nullable();
    t.integer('decided_clicks').nullable();
  });
  await knex.schema.alterTable('send_messages', (t) => {
    t.smallint('ab_rest').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('send_messages', (t) => t.dropColumn('ab_rest'));
  await knex.schema.alterTable('ab_variants', (t) => {
    for (const c of ['decided_triggered', 'decided_delivered', 'decided_opens', 'decided_clicks']) t.dropColumn(c);
  });
  await knex.schema.alterTable('ab_tests', (t) => t.dropColumn('chosen_by'));
}
