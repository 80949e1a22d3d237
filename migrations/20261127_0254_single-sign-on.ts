import type { Knex } from 'knex';

/**
 * Single sign-on (OpenID Connect): the provider's subject a team user signed in with, so the
 * person is found again by it (an address at the provider may change; `sub` does not).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('team_users', (t) => {
    t.string('sso_issuer', 255).nullable();
    t.string('sso_subject', 255).nullable();
    t.unique(['sso_issuer', 'sso_subject']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('team_users', (t) => {
    t.dropUnique(['sso_issuer', 'sso_subject']);
    t.dropColumn('sso_subject');
    t.dropColumn('sso_issuer');
  });
}
