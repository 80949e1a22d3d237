import type { Knex } from 'knex';

/**
 * A/B tests of single sends. `ab_tests` is one test per send and its state machine
 * (AB_TEST_STATE: waiting for the send to start, testing, sent to the rest), with the moment
 * the winner is due (`decide_at`) and the chosen variant. `ab_variants` are its 2–4 variants
 * by index, each overriding what it sets of the send's subject, preheader, sender name and
 * template. `send_messages.ab_variant` is the variant a message renders with: written with the
 * test's rows when the send starts, and on the held rest when the winner is released.
 */
export async function up(knex: Knex): Promise<void> {
  const instant = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 });
  await knex.schema.createTable('ab_tests', (t) => {
    t.increments('id');
    t.integer('user_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.integer('single_send_id').notNullable().references('id').inTable('single_sends').onDelete('CASCADE');
    t.smallint('test_percent').notNullable();
    t.string('winner_metric', 16).notNullable();
    t.integer('wait_minutes').notNullable();
    t.smallint('state').notNullable();
    t.smallint('winner').nullable();
    instant(t, 'decide_at').nullable();
    instant(t, 'decided_at').nullable();
    instant(t, 'created_at').notNullable();
    instant(t, 'updated_at').notNullable();
    t.unique(['single_send_id']);
  });
  // The worker looks for tests whose winner is due.
  await knex.raw('create index ab_tests_due on ab_tests (decide_at) where state = 1');
  await knex.schema.createTable('ab_variants', (t) => {
    t.increments('id');
    t.integer('ab_test_id').notNullable().references('id').inTable('ab_tests').onDelete('CASCADE');
    t.smallint('variant').notNullable();
    t.text('subject').nullable();
    t.text('preheader').nullable();
    t.string('from_name', 255).nullable();
    t.text('template_html').nullable();
    t.text('template_json').nullable();
    t.unique(['ab_test_id', 'variant']);
  });
  await knex.schema.alterTable('send_messages', (t) => {
    t.smallint('ab_variant').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('send_messages', (t) => t.dropColumn('ab_variant'));
  await knex.schema.dropTableIfExists('ab_variants');
  await knex.schema.dropTableIfExists('ab_tests');
}
