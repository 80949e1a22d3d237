import type { Knex } from 'knex';

/**
 * Bounces and complaints that come back after a message left (DSNs, ARF reports, provider
 * webhooks): one row per (message, event), so an event that arrives twice counts once, and
 * soft bounces of an address are counted over a window. The suppression list gains the
 * address as written, why it is there (`category`: hard_bounce, soft_bounce, complaint,
 * manual) and where that was learnt (`source`); `reason` keeps the diagnostic text.
 */
export async function up(knex: Knex): Promise<void> {
  const instant = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 });
  await knex.schema.createTable('message_feedback', (t) => {
    t.bigIncrements('id');
    t.integer('user_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.bigInteger('message_id').notNullable().references('id').inTable('send_messages').onDelete('CASCADE');
    t.string('email_key', 320).notNullable();
    t.string('event', 16).notNullable();
    t.smallint('permanent').notNullable();
    t.string('status', 16).nullable();
    t.string('diagnostic', 500).notNullable();
    t.string('source', 40).notNullable();
    instant(t, 'created_at').notNullable();
    t.unique(['message_id', 'event']);
    t.index(['user_id', 'email_key', 'created_at']);
  });
  await knex.schema.alterTable('suppressed_addresses', (t) => {
    t.string('email_address', 320).nullable();
    t.string('category', 16).nullable();
    t.string('source', 40).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('suppressed_addresses', (t) => {
    t.dropColumn('email_address');
    t.dropColumn('category');
    t.dropColumn('source');
  });
  await knex.schema.dropTableIfExists('message_feedback');
}
