import type { Knex } from 'knex';

/** The rate alerts a single send has raised (bounce, complaint): each is mailed once per send. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('send_alerts', (t) => {
    t.increments('id');
    t.integer('single_send_id').notNullable().references('id').inTable('single_sends').onDelete('CASCADE');
    t.string('kind', 16).notNullable();
    t.timestamp('created_at', { useTz: true, precision: 6 }).notNullable();
    t.unique(['single_send_id', 'kind']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('send_alerts');
}
