import type { Knex } from 'knex';

/**
 * A dashboard upload now waits for its columns to be chosen (status `mapping`) before it is
 * imported; `upload_path` is where its file waits meanwhile (removed once imported, or by the
 * sweep of uploads left waiting).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('imports', (t) => {
    t.string('upload_path', 1000).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('imports', (t) => {
    t.dropColumn('upload_path');
  });
}
