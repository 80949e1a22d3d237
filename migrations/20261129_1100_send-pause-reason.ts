import type { Knex } from 'knex';

/**
 * `single_sends.pause_reason`: why the service paused a send (`policy`, `template_error`,
 * `unauthenticated`), so its page can say what happened and what to fix; null for a send paused
 * by a person or not paused. Cleared when the send is resumed.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('single_sends', (t) => {
    t.string('pause_reason', 32).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('single_sends', (t) => t.dropColumn('pause_reason'));
}
