import type { Knex } from 'knex';

/**
 * How many delivered messages of a single send (or an automation) had a Liquid value that failed
 * at render time and was left empty: the message went out, the author should look at the template.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('single_sends', (t) => {
    t.integer('template_errors').notNullable().defaultTo(0);
  });
  await knex.schema.alterTable('automations', (t) => {
    t.integer('total_template_errors').notNullable().defaultTo(0);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('single_sends', (t) => {
    t.dropColumn('template_errors');
  });
  await knex.schema.alterTable('automations', (t) => {
    t.dropColumn('total_template_errors');
  });
}
