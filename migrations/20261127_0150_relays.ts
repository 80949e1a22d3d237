import type { Knex } from 'knex';

/**
 * Relays: an account's own ways out (an SMTP server or a provider's API). Health lives here, not
 * in a worker's memory, so every worker process skips a relay that one of them found down.
 * Each message records the relay that accepted it and the provider's id for it, so a provider's
 * webhook can be matched by that id too. Single sends and automation steps may name a relay.
 */
export async function up(knex: Knex): Promise<void> {
  const instant = (t: Knex.CreateTableBuilder | Knex.AlterTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 });

  await knex.schema.createTable('relays', (t) => {
    t.increments('id');
    t.integer('user_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.string('name', 255).notNullable();
    // RELAY_KINDS in src/lib/constants.ts.
    t.string('kind', 16).notNullable();
    // An SMTP relay's URL without its password (the password is in secret_sealed).
    t.string('url', 2000).nullable();
    t.string('region', 64).nullable();
    t.string('endpoint', 2000).nullable();
    // The API key or SMTP password, encrypted with the app secret (AES-256-GCM).
    t.text('secret_sealed').nullable();
    // Messages per second; 0: no limit of its own.
    t.float('max_rate').notNullable().defaultTo(0);
    t.integer('priority').notNullable().defaultTo(0);
    // JSON array of domain names it serves; empty: any.
    t.text('domains').notNullable();
    // Health: skipped until down_until; failures in a row set the next backoff.
    instant(t, 'down_until').nullable();
    t.integer('failures').notNullable().defaultTo(0);
    t.string('last_error', 500).nullable();
    instant(t, 'last_error_at').nullable();
    instant(t, 'last_sent_at').nullable();
    instant(t, 'created_at').notNullable();
    instant(t, 'updated_at').notNullable();
    t.index(['user_id', 'priority']);
  });

  // Each relay's next sending slot (ms since the epoch), shared by every worker process.
  await knex.schema.createTable('relay_rate_slots', (t) => {
    t.integer('relay_id').primary().references('id').inTable('relays').onDelete('CASCADE');
    t.double('next_at').notNullable();
  });
  // A slot lost in a crash only restarts the relay's pacing: on PostgreSQL the row skips the
  // write-ahead log, as the account's mail rate slots do, so workers do not queue on its flush.
  if (knex.client.config.client === 'pg') await knex.raw('alter table relay_rate_slots set unlogged');

  await knex.schema.alterTable('send_messages', (t) => {
    // No foreign key: a deleted relay leaves its history in the ledger.
    t.integer('relay_id').nullable();
    t.string('provider_message_id', 255).nullable();
    // Why a message failed, when the reason is not the recipient's: `policy`.
    t.string('failure_reason', 16).nullable();
  });
  await knex.raw('create index send_messages_provider_id on send_messages (provider_message_id) where provider_message_id is not null');
  // A relay's recent messages (the dashboard's sent-in-the-last-hour).
  await knex.raw('create index send_messages_relay_sent on send_messages (relay_id, sent_at) where relay_id is not null');

  await knex.schema.alterTable('single_sends', (t) => {
    t.integer('relay_id').nullable();
  });
  await knex.schema.alterTable('automation_schedules', (t) => {
    t.integer('relay_id').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('automation_schedules', (t) => t.dropColumn('relay_id'));
  await knex.schema.alterTable('single_sends', (t) => t.dropColumn('relay_id'));
  await knex.raw('drop index if exists send_messages_relay_sent');
  await knex.raw('drop index if exists send_messages_provider_id');
  await knex.schema.alterTable('send_messages', (t) => {
    t.dropColumn('failure_reason');
    t.dropColumn('provider_message_id');
    t.dropColumn('relay_id');
  });
  await knex.schema.dropTableIfExists('relay_rate_slots');
  await knex.schema.dropTableIfExists('relays');
}
