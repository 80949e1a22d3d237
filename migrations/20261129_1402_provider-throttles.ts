import type { Knex } from 'knex';

/**
 * `provider_throttles`: how the sending treats one mailbox provider after it deferred mail for
 * the sender's volume (src/services/delivery/providers/provider-throttle.ts): one row per
 * provider, shared by every worker. `level` 0 is full speed; each level halves the rate
 * (`interval_ms` between two messages to it, slots taken through `next_at`).
 */
export async function up(knex: Knex): Promise<void> {
  const instant = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 });
  await knex.schema.createTable('provider_throttles', (t) => {
    t.string('provider', 16).primary();
    t.integer('level').notNullable();
    t.integer('interval_ms').notNullable();
    // Milliseconds since the epoch: the next free slot while slowed.
    t.bigInteger('next_at').notNullable();
    t.integer('backoff_ms').notNullable();
    instant(t, 'wait_until').nullable();
    // Deliveries since the level last changed (it climbs back after enough).
    t.integer('successes').notNullable();
    instant(t, 'since').nullable();
    t.string('last_code', 16).nullable();
    t.string('last_text', 200).nullable();
    instant(t, 'updated_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('provider_throttles');
}
