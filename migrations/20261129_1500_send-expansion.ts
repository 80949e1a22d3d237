import type { Knex } from 'knex';

/**
 * A single send's ledger is written while it sends, in batches along a keyset cursor
 * (services/delivery/ledger/expansion.ts): `single_sends.expand_cursor` is where the next batch
 * begins (null: nothing left to expand, or a send started before this), `recipients_total` the
 * audience counted when the send started, corrected to the rows written when the expansion ends.
 * A batch of a contact type's recipients is read in id order from `contacts_type_live_id`.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('single_sends', (t) => {
    t.string('expand_cursor', 400).nullable();
    t.integer('recipients_total').nullable();
  });
  await knex.raw('create index contacts_type_live_id on contacts (user_id, contact_type_id, id) where deleted_at is null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists contacts_type_live_id');
  await knex.schema.alterTable('single_sends', (t) => t.dropColumns('expand_cursor', 'recipients_total'));
}
