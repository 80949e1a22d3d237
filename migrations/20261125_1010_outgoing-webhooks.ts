import type { Knex } from 'knex';

/**
 * Outgoing webhooks (issue 13, point 5): an account's endpoints and the durable outbox of their
 * deliveries. A delivery row is written in the transaction of the change it reports; workers
 * lease an endpoint (lease_owner, lease_until) and post its due rows one request at a time.
 * States are HOOK_DELIVERY_STATE in src/lib/constants.ts.
 */
export async function up(knex: Knex): Promise<void> {
  const instant = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 });

  await knex.schema.createTable('webhook_endpoints', (t) => {
    t.increments('id');
    t.integer('user_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.string('url', 2000).notNullable();
    t.string('description', 255).notNullable().defaultTo('');
    // JSON array of event types.
    t.text('events').notNullable();
    // The signing secret, encrypted with the app secret (AES-256-GCM): the database alone does not reveal it.
    t.text('secret_sealed').notNullable();
    t.string('lease_owner', 64).nullable();
    instant(t, 'lease_until').nullable();
    instant(t, 'created_at').notNullable();
    instant(t, 'updated_at').notNullable();
    t.index(['user_id', 'id']);
  });

  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.bigIncrements('id');
    t.integer('user_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.integer('endpoint_id').notNullable().references('id').inTable('webhook_endpoints').onDelete('CASCADE');
    // The event's id (the payload's `id`); the same for every endpoint the event goes to.
    t.string('event_id', 64).notNullable();
    t.string('event_type', 40).notNullable();
    // The `webhook-id` of the request that carries it: the event id, or a batch's id once batched.
    t.string('message_id', 64).nullable();
    // The event's `data`, JSON.
    t.text('data').notNullable();
    // Events of one contact (its email key) go to an endpoint in the order they happened.
    t.string('contact_key', 320).nullable();
    t.smallint('state').notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    instant(t, 'next_attempt_at').nullable();
    t.integer('response_code').nullable();
    t.string('last_error', 500).nullable();
    instant(t, 'delivered_at').nullable();
    instant(t, 'created_at').notNullable();
    instant(t, 'updated_at').notNullable();
    t.index(['endpoint_id', 'id']);
    t.index(['endpoint_id', 'contact_key', 'id']);
  });
  // What a worker reads: an endpoint's pending rows in order of when they are due.
  await knex.raw('create index webhook_deliveries_due on webhook_deliveries (endpoint_id, next_attempt_at) where state = 0');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('webhook_deliveries');
  await knex.schema.dropTableIfExists('webhook_endpoints');
}
