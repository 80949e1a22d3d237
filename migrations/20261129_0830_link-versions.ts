import type { Knex } from 'knex';

/**
 * `link_versions`: the link numbers one saved content of an automation step carries (a step
 * can be edited while it runs, and its links are numbered by URL across its versions), stored
 * once per step and set of numbers; `send_messages.link_version_id` names the one a message was
 * sent with, so its `/c/<token>/<n>` resolves only among those numbers. Null for messages sent
 * before (and single sends, whose content does not change): any link of their send or step.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('link_versions', (t) => {
    t.increments('id');
    t.integer('automation_schedule_id').notNullable().references('id').inTable('automation_schedules').onDelete('CASCADE');
    // sha256 of `numbers`: the key of a version within its step.
    t.string('digest', 64).notNullable();
    // The link numbers, ascending, as a JSON array.
    t.text('numbers').notNullable();
    t.timestamp('created_at', { useTz: true, precision: 6 }).notNullable();
    t.unique(['automation_schedule_id', 'digest']);
  });
  await knex.schema.alterTable('send_messages', (t) => {
    t.integer('link_version_id').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('send_messages', (t) => t.dropColumn('link_version_id'));
  await knex.schema.dropTableIfExists('link_versions');
}
