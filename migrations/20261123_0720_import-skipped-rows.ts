import type { Knex } from 'knex';

/**
 * Every row a dashboard import skipped, with its reason and its values (JSON text; null when
 * the row could not be read), so the page offers all of them as a CSV, not only the first 100
 * of the summary. `header` keeps the file's header row (JSON text) for that CSV.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('imports', (t) => {
    t.text('header').nullable();
  });
  await knex.schema.createTable('import_skipped_rows', (t) => {
    t.bigIncrements('id');
    t.integer('import_id').notNullable().references('id').inTable('imports').onDelete('CASCADE');
    t.integer('row_number').notNullable();
    t.string('reason', 500).notNullable();
    t.text('cells').nullable();
    t.index(['import_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('import_skipped_rows');
  await knex.schema.alterTable('imports', (t) => {
    t.dropColumn('header');
  });
}
