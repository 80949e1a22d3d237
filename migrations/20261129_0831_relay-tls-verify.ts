import type { Knex } from 'knex';

/**
 * `relays.tls_verify`: whether an SMTP relay's certificate must verify (1, the default) or a
 * self-signed one is taken (0: the connection is still encrypted), as BOUNCE_IMAP_TLS_VERIFY
 * does for the bounce mailbox.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('relays', (t) => {
    t.smallint('tls_verify').notNullable().defaultTo(1);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('relays', (t) => t.dropColumn('tls_verify'));
}
