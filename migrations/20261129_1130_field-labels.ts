import type { Knex } from 'knex';

/**
 * `fields.label`: the words people see for a custom field, when they differ from its name (a
 * field an import made from the header `Signup Date` is named `Signup_Date`, labelled as the
 * header). Empty: the name is shown.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('fields', (t) => {
    t.string('label', 255).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('fields', (t) => t.dropColumn('label'));
}
