import type { Knex } from 'knex';

/**
 * Designs an account saved as its own templates (issue 14, point 4): the visual editor's project
 * (`template_json`, GrapesJS project data, null for a design written as HTML) and the exported,
 * CSS-inlined HTML (`template_html`), the same pair a single send and an automation step store.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('account_templates', (t) => {
    t.increments('id');
    t.integer('user_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.string('template_name', 255).notNullable();
    t.text('template_json').nullable();
    t.text('template_html').notNullable();
    t.timestamp('created_at', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('updated_at', { useTz: true, precision: 6 }).notNullable();
    t.index(['user_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('account_templates');
}
