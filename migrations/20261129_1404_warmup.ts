import type { Knex } from 'knex';

/**
 * Warm-up schedules: `sending_domains.warmup` (a JSON array of daily caps per provider, null:
 * none) from `warmup_started_at`; `warmup_usage` counts what each provider took of a domain's cap
 * on one UTC day (one atomic statement per message, see src/db/warmup-slots.ts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sending_domains', (t) => {
    t.text('warmup').nullable();
    t.timestamp('warmup_started_at', { useTz: true, precision: 6 }).nullable();
  });
  await knex.schema.createTable('warmup_usage', (t) => {
    t.integer('sending_domain_id').notNullable().references('id').inTable('sending_domains').onDelete('CASCADE');
    t.string('provider', 16).notNullable();
    t.string('day', 10).notNullable();
    t.integer('used').notNullable();
    t.primary(['sending_domain_id', 'provider', 'day']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('warmup_usage');
  await knex.schema.alterTable('sending_domains', (t) => {
    t.dropColumn('warmup_started_at');
    t.dropColumn('warmup');
  });
}
