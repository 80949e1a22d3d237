import type { Knex } from 'knex';

/**
 * The per-address cap on sign-up confirmation mails (SIGNUP.mailsPerAddressPerDay in 24 hours)
 * as slots with a unique key: one row per account, address and slot number, holding when the
 * slot was last taken (ms since the epoch). A submission takes the first slot that is free or
 * older than 24 hours in one upsert each, so concurrent submissions for one address on any
 * number of processes can never take more slots than there are. The address is kept as a
 * keyed hash (HMAC under the app secret), not in clear.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('signup_mail_slots', (t) => {
    t.integer('user_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.string('address', 64).notNullable();
    t.smallint('slot').notNullable();
    t.bigInteger('taken_at').notNullable();
    t.primary(['user_id', 'address', 'slot']);
    t.index(['taken_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('signup_mail_slots');
}
