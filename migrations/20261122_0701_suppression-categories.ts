import type { Knex } from 'knex';

/** Suppressions written before 0700 all came from synchronous SMTP 5xx replies. */
export async function up(knex: Knex): Promise<void> {
  await knex('suppressed_addresses').whereNull('category').update({ category: 'hard_bounce' });
  await knex('suppressed_addresses').whereNull('source').update({ source: 'smtp' });
  await knex('suppressed_addresses').whereNull('email_address').update({ email_address: knex.ref('email_key') });
}

export async function down(): Promise<void> {
  // Data only: nothing to undo.
}
