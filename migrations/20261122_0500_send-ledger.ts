import type { Knex } from 'knex';

/**
 * The durable send ledger: one row per (send, recipient address), written before anything
 * is sent. Workers claim rows whose `available_at` has come (a queued row's next attempt, or
 * a sending row's expired lease), so a worker that dies leaves nothing behind.
 * States are MESSAGE_STATE in src/lib/constants.ts.
 */
export async function up(knex: Knex): Promise<void> {
  const instant = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 });

  await knex.schema.createTable('send_messages', (t) => {
    t.bigIncrements('id');
    t.integer('user_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.smallint('kind').notNullable();
    t.integer('single_send_id').nullable().references('id').inTable('single_sends').onDelete('CASCADE');
    t.integer('automation_id').nullable().references('id').inTable('automations').onDelete('CASCADE');
    t.integer('automation_schedule_id').nullable().references('id').inTable('automation_schedules').onDelete('CASCADE');
    t.integer('enrolment_id').nullable();
    // Where the personal data comes from when the message is rendered.
    t.integer('contact_id').nullable();
    t.integer('segment_recipient_id').nullable();
    t.string('email', 320).notNullable();
    t.string('email_key', 320).notNullable();
    // Lower sorts first: system mail (verification, notifications) overtakes campaigns.
    t.smallint('priority').notNullable().defaultTo(5);
    t.smallint('state').notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    instant(t, 'available_at').nullable();
    t.string('lease_owner', 64).nullable();
    instant(t, 'sent_at').nullable();
    instant(t, 'opened_at').nullable();
    // The n-th unique open of its send (unique_open_token).
    t.integer('open_seq').nullable();
    instant(t, 'unsubscribed_at').nullable();
    t.integer('smtp_code').nullable();
    t.string('last_error', 500).nullable();
    // System mail only: the whole message as JSON (from, subject, html, text).
    t.text('payload').nullable();
    instant(t, 'created_at').notNullable();
    instant(t, 'updated_at').notNullable();
    t.index(['single_send_id', 'state']);
    t.index(['automation_id', 'state']);
  });
  await knex.raw(
    'create unique index send_messages_single_once on send_messages (single_send_id, email_key) where single_send_id is not null',
  );
  await knex.raw(
    'create unique index send_messages_step_once on send_messages (automation_schedule_id, enrolment_id) where automation_schedule_id is not null',
  );
  // unique_open_token reads the opened messages of a send in order, without scanning the rest.
  await knex.raw('create index send_messages_opens on send_messages (single_send_id, open_seq) where open_seq is not null');
  // The claim query reads only this (small) partial index.
  await knex.raw('create index send_messages_claimable on send_messages (priority, available_at) where state in (0, 1)');

  // Addresses that bounced (SMTP 5xx): never sent to again by this account.
  await knex.schema.createTable('suppressed_addresses', (t) => {
    t.increments('id');
    t.integer('user_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.string('email_key', 320).notNullable();
    t.string('reason', 500).notNullable();
    instant(t, 'created_at').notNullable();
    t.unique(['user_id', 'email_key']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('suppressed_addresses');
  await knex.schema.dropTableIfExists('send_messages');
}
