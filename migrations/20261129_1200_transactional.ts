import type { Knex } from 'knex';

/**
 * Transactional mail rides the send ledger: each message is a `send_messages` row of its own
 * kind (MESSAGE_KIND.transactional), and `transactional_messages` holds what it is built from
 * (the ledger row stays small: its claim returns no body or attachment). Tags are rows, so the
 * log filters by one through an index. `transactional_templates` are the account's templates
 * for it; `idempotency_keys` holds each key's request and answer for a day, one row per
 * (account, key), inserted before the request is handled so a second request with the key
 * finds it (the unique index is what makes two concurrent requests one).
 */
export async function up(knex: Knex): Promise<void> {
  const instant = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 });

  await knex.schema.createTable('transactional_templates', (t) => {
    t.increments('id');
    t.integer('user_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.string('name', 255).notNullable();
    t.string('subject', 998).notNullable();
    t.text('html').notNullable();
    t.text('text').nullable();
    instant(t, 'created_at').notNullable();
    instant(t, 'updated_at').notNullable();
    t.index(['user_id', 'id']);
  });

  await knex.schema.createTable('transactional_messages', (t) => {
    // The ledger row's id: one message, one row in each table.
    t.bigInteger('id').primary().references('id').inTable('send_messages').onDelete('CASCADE');
    t.integer('user_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.integer('sender_id').nullable();
    t.string('from_name', 255).notNullable();
    t.string('from_email', 320).notNullable();
    t.string('reply_to', 320).nullable();
    t.string('subject', 998).notNullable();
    t.text('html').nullable();
    t.text('text').nullable();
    t.integer('template_id').nullable();
    // JSON: the template's `data`; cc and bcc addresses; X- headers; attachments (base64); tags.
    t.text('data').nullable();
    t.text('cc').nullable();
    t.text('bcc').nullable();
    t.text('headers').nullable();
    t.text('attachments').nullable();
    t.text('tags').nullable();
    // The tracked links' destinations (JSON), written when it is first built: link n is links[n - 1].
    t.text('links').nullable();
    t.smallint('track_opens').notNullable().defaultTo(0);
    t.smallint('track_clicks').notNullable().defaultTo(0);
    // How it came in: `api` or `smtp`.
    t.string('source', 8).notNullable();
    instant(t, 'created_at').notNullable();
    t.index(['user_id', 'id']);
    t.index(['template_id']);
  });

  await knex.schema.createTable('transactional_tags', (t) => {
    t.bigInteger('message_id').notNullable().references('id').inTable('transactional_messages').onDelete('CASCADE');
    t.integer('user_id').notNullable();
    t.string('tag', 64).notNullable();
    t.primary(['message_id', 'tag']);
    t.index(['user_id', 'tag', 'message_id']);
  });

  // What a message's ledger row forgets when it is retried: the failure before the retry.
  await knex.schema.createTable('transactional_events', (t) => {
    t.increments('id');
    t.bigInteger('message_id').notNullable().references('id').inTable('transactional_messages').onDelete('CASCADE');
    t.string('type', 16).notNullable();
    t.string('detail', 500).nullable();
    instant(t, 'at').notNullable();
    t.index(['message_id']);
  });

  await knex.schema.createTable('idempotency_keys', (t) => {
    t.increments('id');
    t.integer('user_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.string('idempotency_key', 256).notNullable();
    // sha256 of the route and its body: the same key with another request is refused.
    t.string('request_hash', 64).notNullable();
    // The first answer, as JSON; null while the first request is being handled.
    t.text('response').nullable();
    instant(t, 'created_at').notNullable();
    t.unique(['user_id', 'idempotency_key']);
    t.index(['created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('idempotency_keys');
  await knex.schema.dropTableIfExists('transactional_events');
  await knex.schema.dropTableIfExists('transactional_tags');
  await knex.schema.dropTableIfExists('transactional_messages');
  await knex.schema.dropTableIfExists('transactional_templates');
}
