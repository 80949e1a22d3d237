import type { Knex } from 'knex';

/**
 * Sending domains: an account's own domains, each with its DKIM key pair (the private key
 * sealed with the app secret) and the result of its last DNS check. Status names are
 * DOMAIN_STATUS in src/lib/constants.ts.
 */
export async function up(knex: Knex): Promise<void> {
  const instant = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 });
  await knex.schema.createTable('sending_domains', (t) => {
    t.increments('id');
    t.integer('user_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    // Lower-case IDNA ASCII form.
    t.string('domain', 253).notNullable();
    t.string('dkim_selector', 63).notNullable();
    // Base64 of the DER SubjectPublicKeyInfo: the `p=` of the DKIM record.
    t.text('dkim_public_key').notNullable();
    t.text('dkim_private_key_sealed').notNullable();
    t.string('status', 16).notNullable();
    // JSON array of the records and what the last check found for each.
    t.text('records').notNullable();
    instant(t, 'last_checked_at').nullable();
    instant(t, 'verified_at').nullable();
    instant(t, 'created_at').notNullable();
    instant(t, 'updated_at').notNullable();
    t.unique(['user_id', 'domain']);
    // The worker's daily re-check reads the verified domains checked longest ago.
    t.index(['status', 'last_checked_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('sending_domains');
}
