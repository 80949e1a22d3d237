import type { Knex } from 'knex';

/**
 * `recipient_domains`: which mailbox provider each recipient domain is at (by its MX hosts,
 * see src/services/delivery/providers/provider-table.ts), looked up once a day per domain; the
 * figures join it when they are read, so a domain resolved late moves to its provider.
 * `message_deferrals`: each temporary refusal of a message (one row per deferral, few beside the
 * deliveries), for the per-provider figures and their most frequent deferral codes.
 */
export async function up(knex: Knex): Promise<void> {
  const instant = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 });
  await knex.schema.createTable('recipient_domains', (t) => {
    // Lower-case IDNA ASCII form, as in email_key.
    t.string('domain', 253).primary();
    t.string('provider', 16).notNullable();
    // The MX hosts found, comma-separated (empty: none).
    t.text('mx').notNullable();
    instant(t, 'checked_at').notNullable();
    // The background refresh reads the domains checked longest ago.
    t.index(['checked_at']);
  });
  await knex.schema.createTable('message_deferrals', (t) => {
    t.bigIncrements('id');
    t.bigInteger('message_id').notNullable().references('id').inTable('send_messages').onDelete('CASCADE');
    t.integer('user_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.string('domain', 253).notNullable();
    // The enhanced status code (4.7.28) when the reply had one, else the reply code (421).
    t.string('code', 16).notNullable();
    t.string('text', 200).notNullable();
    instant(t, 'created_at').notNullable();
    t.index(['message_id']);
    t.index(['user_id', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('message_deferrals');
  await knex.schema.dropTableIfExists('recipient_domains');
}
