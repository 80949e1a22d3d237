import type { Knex } from 'knex';

/**
 * `provider_pauses`: a sending domain's mail to one mailbox provider paused by the complaint and
 * bounce guard (src/services/delivery/providers/provider-guard.ts): its messages stay queued while
 * `resumed_at` is null. An admin's resume sets it and `resumed_after_id` (the last ledger row at
 * that moment): the guard then judges only messages written after it, so the figures that paused
 * it do not pause it again.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('provider_pauses', (t) => {
    t.increments('id');
    t.integer('user_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.integer('sending_domain_id').notNullable().references('id').inTable('sending_domains').onDelete('CASCADE');
    t.string('provider', 16).notNullable();
    t.text('paused_reason').notNullable();
    t.timestamp('paused_at', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('resumed_at', { useTz: true, precision: 6 }).nullable();
    t.bigInteger('resumed_after_id').nullable();
    t.unique(['sending_domain_id', 'provider']);
    t.index(['user_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('provider_pauses');
}
