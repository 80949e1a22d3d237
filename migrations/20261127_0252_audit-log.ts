import type { Knex } from 'knex';

/**
 * The audit log: who changed what in an account, through either face, and every export,
 * sign-in and failed sign-in. A row is written in the transaction of the change it records.
 * The actor's name is copied into the row, so the log still says who it was after the user or
 * key is gone. Actions are AUDIT_ACTIONS in src/lib/constants.ts.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('audit_log', (t) => {
    t.bigIncrements('id');
    t.integer('user_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    // 'user' | 'api_key' | 'system'; the id is null for the account's original key and for the system.
    t.string('actor_type', 16).notNullable();
    t.integer('actor_id').nullable();
    t.string('actor_name', 255).notNullable();
    t.string('action', 64).notNullable();
    t.string('record_type', 40).nullable();
    t.string('record_id', 64).nullable();
    t.string('summary', 500).notNullable().defaultTo('');
    t.string('ip', 64).nullable();
    t.timestamp('created_at', { useTz: true, precision: 6 }).notNullable();
    t.index(['user_id', 'id']);
    t.index(['user_id', 'action', 'id']);
    t.index(['user_id', 'record_type', 'record_id']);
    t.index(['created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('audit_log');
}
