import type { Knex } from 'knex';

/**
 * CSV imports started from the dashboard run in the background of the web process; their
 * progress and summary live here, so the page that polls them (on any web process) reads
 * rows, never memory. `summary` is the API's import summary as JSON text.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('imports', (t) => {
    t.increments('id');
    t.integer('user_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.integer('contact_type_id').notNullable().references('id').inTable('contact_types');
    t.string('file_name', 255).notNullable();
    t.string('status', 16).notNullable();
    t.integer('rows_total').nullable();
    t.integer('rows_done').notNullable().defaultTo(0);
    t.text('summary').nullable();
    t.string('error', 500).nullable();
    t.timestamp('created_at', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('updated_at', { useTz: true, precision: 6 }).notNullable();
    t.index(['user_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('imports');
}
