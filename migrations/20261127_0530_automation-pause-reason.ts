import type { Knex } from 'knex';

/**
 * `automations.paused_reason`: why the service itself paused a live automation (its sender's
 * domain is not authenticated while REQUIRE_DOMAIN_AUTH), in words its page shows; null when it
 * was not paused by the service. Setting it live or pausing it by hand clears it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('automations', (t) => {
    t.string('paused_reason', 500).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('automations', (t) => t.dropColumn('paused_reason'));
}
