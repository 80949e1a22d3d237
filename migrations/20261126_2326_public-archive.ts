import type { Knex } from 'knex';

/**
 * The public archive and web views.
 * - `single_sends.archive`: 1 when a completed send is listed in its account's public archive
 *   (extension parameter `archive`, default 0).
 * - `accounts.archive_id`: the random id in the archive's public address (`/archive/<id>`),
 *   given to an account the first time its archive address is asked for; null until then. A
 *   random id and not the account id or its API public key: the address says nothing about
 *   the account and gives nothing to sign in with.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('single_sends', (t) => {
    t.integer('archive').notNullable().defaultTo(0);
  });
  await knex.schema.alterTable('accounts', (t) => {
    t.string('archive_id', 32).nullable().unique();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('accounts', (t) => t.dropColumn('archive_id'));
  await knex.schema.alterTable('single_sends', (t) => t.dropColumn('archive'));
}
