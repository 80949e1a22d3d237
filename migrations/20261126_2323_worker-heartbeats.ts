import type { Knex } from 'knex';

/**
 * One row per running worker process, rewritten every few seconds: the health endpoints and
 * the metrics read the newest `beat_at` to tell whether anything is sending at all. Rows of
 * workers that stopped long ago are deleted by the beats of the living ones.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('worker_heartbeats', (t) => {
    t.string('owner', 64).primary();
    t.string('role', 20).notNullable();
    t.timestamp('started_at', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('beat_at', { useTz: true, precision: 6 }).notNullable();
    t.index(['beat_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('worker_heartbeats');
}
