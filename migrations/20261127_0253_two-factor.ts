import type { Knex } from 'knex';

/**
 * Two-factor sign-in (TOTP, RFC 6238) for team users:
 * - `team_users.totp_secret_sealed`: the authenticator's secret, sealed with the app secret
 *   (the database alone does not reveal it); `totp_pending_sealed` holds the one being enrolled
 *   until a first code confirms it; `totp_enabled_at` says it is on; `totp_last_step` is the
 *   time step of the last accepted code, so a code is accepted once.
 * - `team_user_recovery_codes`: ten one-time codes per person, SHA-256 only; `used_at` once used.
 * - `accounts.two_factor_required`: the owner or an admin requires it for every person.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('team_users', (t) => {
    t.text('totp_secret_sealed').nullable();
    t.text('totp_pending_sealed').nullable();
    t.timestamp('totp_enabled_at', { useTz: true, precision: 6 }).nullable();
    t.bigInteger('totp_last_step').nullable();
  });
  await knex.schema.createTable('team_user_recovery_codes', (t) => {
    t.increments('id');
    t.integer('team_user_id').notNullable().references('id').inTable('team_users').onDelete('CASCADE');
    t.string('code_hash', 64).notNullable();
    t.timestamp('used_at', { useTz: true, precision: 6 }).nullable();
    t.timestamp('created_at', { useTz: true, precision: 6 }).notNullable();
    t.index(['team_user_id']);
  });
  await knex.schema.alterTable('accounts', (t) => {
    t.smallint('two_factor_required').notNullable().defaultTo(0);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('accounts', (t) => t.dropColumn('two_factor_required'));
  await knex.schema.dropTableIfExists('team_user_recovery_codes');
  await knex.schema.alterTable('team_users', (t) => {
    t.dropColumn('totp_last_step');
    t.dropColumn('totp_enabled_at');
    t.dropColumn('totp_pending_sealed');
    t.dropColumn('totp_secret_sealed');
  });
}
