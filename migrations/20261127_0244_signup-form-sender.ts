import type { Knex } from 'knex';

/**
 * `signup_forms.sender_id`: the verified sender whose name and address the form's double
 * opt-in confirmation mail comes from; null: the service's own address (MAIL_FROM).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('signup_forms', (t) => {
    t.integer('sender_id').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('signup_forms', (t) => t.dropColumn('sender_id'));
}
