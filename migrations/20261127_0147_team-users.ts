import type { Knex } from 'knex';

/**
 * People and keys of an account.
 * - `team_users`: the people who sign in to an account's dashboard, each with a role
 *   (TEAM_ROLES) and a status (TEAM_USER_STATUS). `user_id` is the account, as everywhere in the
 *   reference; the person is `team_users.id`. An address belongs to one person of one account
 *   (`email_key` unique), so a sign-in names exactly one user. One owner per account.
 * - `team_user_tokens`: invitation and password-reset links, stored as their SHA-256 only,
 *   spent once (`used_at`).
 * - `sessions.team_user_id`: who a dashboard session belongs to; `ip` and `user_agent` let a
 *   user recognise their sessions before ending them.
 * - `api_keys`: key pairs beyond the account's original one (which stays on `accounts` and acts
 *   as the owner), each with a role; the secret is stored as its SHA-256 only.
 *
 * Each account's existing sign-in becomes its owner (same address, name and password), and open
 * dashboard sessions belong to that owner, so nobody is signed out by the upgrade. The copy is
 * part of this migration: no database ever has the tables without the owners.
 */
export async function up(knex: Knex): Promise<void> {
  const timestamp = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 });

  await knex.schema.createTable('team_users', (t) => {
    t.increments('id');
    t.integer('user_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.string('email', 255).notNullable();
    t.string('email_key', 255).notNullable().unique();
    t.string('name', 255).notNullable();
    t.string('role', 16).notNullable();
    t.string('status', 16).notNullable();
    t.string('password_hash', 255).nullable();
    timestamp(t, 'last_sign_in_at').nullable();
    timestamp(t, 'created_at').notNullable();
    timestamp(t, 'updated_at').notNullable();
    t.index(['user_id']);
  });
  await knex.raw("create unique index team_users_one_owner on team_users (user_id) where role = 'owner'");

  await knex.schema.createTable('team_user_tokens', (t) => {
    t.increments('id');
    t.integer('team_user_id').notNullable().references('id').inTable('team_users').onDelete('CASCADE');
    t.string('purpose', 16).notNullable();
    t.string('token_hash', 64).notNullable().unique();
    timestamp(t, 'expires_at').notNullable().index();
    timestamp(t, 'used_at').nullable();
    timestamp(t, 'created_at').notNullable();
    t.index(['team_user_id', 'purpose']);
  });

  await knex.schema.alterTable('sessions', (t) => {
    t.integer('team_user_id').nullable().references('id').inTable('team_users').onDelete('CASCADE');
    t.string('ip', 64).nullable();
    t.string('user_agent', 255).nullable();
    t.index(['team_user_id']);
  });

  await knex.schema.createTable('api_keys', (t) => {
    t.increments('id');
    t.integer('user_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.string('name', 255).notNullable();
    t.string('role', 16).notNullable();
    t.string('public_key', 64).notNullable().unique();
    t.string('secret_key_hash', 128).notNullable();
    timestamp(t, 'last_used_at').nullable();
    timestamp(t, 'created_at').notNullable();
    timestamp(t, 'updated_at').notNullable();
    t.index(['user_id']);
  });

  await knex.raw(
    `insert into team_users (user_id, email, email_key, name, role, status, password_hash, created_at, updated_at)
     select id, email, email_key, name, 'owner', 'active', password_hash, created_at, updated_at from accounts`,
  );
  await knex.raw(
    `update sessions set team_user_id = (
       select team_users.id from team_users where team_users.user_id = sessions.account_id and team_users.role = 'owner'
     )`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('api_keys');
  await knex.schema.alterTable('sessions', (t) => {
    t.dropIndex(['team_user_id']);
    t.dropForeign(['team_user_id']);
    t.dropColumn('team_user_id');
    t.dropColumn('ip');
    t.dropColumn('user_agent');
  });
  await knex.schema.dropTableIfExists('team_user_tokens');
  await knex.schema.dropTableIfExists('team_users');
}
