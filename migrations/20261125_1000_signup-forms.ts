import type { Knex } from 'knex';

/**
 * Signup forms with double opt-in (issue 11, point 9).
 * - `signup_forms`: a public form of one contact type, reached at `/subscribe/<public_id>` (a
 *   random id, so forms cannot be walked by number); which fields it asks (`fields`, JSON list
 *   of contact column and custom field names), which `is_display` groups it offers
 *   (`group_ids`, JSON list) and the thank-you text. Soft-deleted, so consent keeps its form.
 * - `signups`: one row per submission that sent a confirmation mail. It holds what was typed
 *   (`submitted`, JSON) until the link is confirmed; the link's token is stored only as its
 *   sha256 (`token_hash`, written when the mail goes out, `message_id` naming that ledger row).
 *   A confirmed row is the consent record: when (`requested_at`, `confirmed_at`), from where
 *   (`requested_ip`, `confirmed_ip`), through which form, with which groups.
 */
export async function up(knex: Knex): Promise<void> {
  const pg = knex.client.config.client === 'pg';
  const json = (t: Knex.CreateTableBuilder, name: string) => (pg ? t.jsonb(name) : t.text(name));
  const time = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 });

  await knex.schema.createTable('signup_forms', (t) => {
    t.increments('id');
    t.integer('user_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.integer('contact_type_id').notNullable();
    t.string('public_id', 32).notNullable().unique();
    t.string('name', 255).notNullable();
    json(t, 'fields').notNullable();
    json(t, 'group_ids').notNullable();
    t.text('thank_you').notNullable().defaultTo('');
    time(t, 'created_at').notNullable();
    time(t, 'updated_at').notNullable();
    time(t, 'deleted_at').nullable();
    t.index(['user_id']);
  });

  await knex.schema.createTable('signups', (t) => {
    t.increments('id');
    t.integer('user_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.integer('form_id').notNullable().references('id').inTable('signup_forms');
    t.string('email', 320).notNullable();
    t.string('email_key', 320).notNullable();
    json(t, 'submitted').nullable();
    json(t, 'group_ids').notNullable();
    t.integer('message_id').nullable();
    t.string('token_hash', 64).nullable().unique();
    t.string('requested_ip', 64).notNullable();
    time(t, 'requested_at').notNullable();
    time(t, 'expires_at').notNullable().index();
    t.string('confirmed_ip', 64).nullable();
    time(t, 'confirmed_at').nullable();
    t.integer('contact_id').nullable();
    t.index(['user_id', 'email_key']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('signups');
  await knex.schema.dropTableIfExists('signup_forms');
}
