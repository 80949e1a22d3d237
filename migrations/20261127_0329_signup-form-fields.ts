import type { Knex } from 'knex';

/**
 * `signup_forms.required_fields`: which of the form's `fields` (contact columns, `country`,
 * custom field names) a visitor must fill in, a JSON list of names; null: none required.
 * What the visitor gave for them stays in `signups.submitted` until the link is confirmed.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('signup_forms', (t) => {
    t.text('required_fields').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('signup_forms', (t) => t.dropColumn('required_fields'));
}
