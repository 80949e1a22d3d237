import type { Knex } from 'knex';

/**
 * Lists stream newest first in id chunks (`where id < last order by id desc limit n`).
 * Without an index that starts with the owner and ends with the id, both databases read and
 * sort every row of the account for every chunk (100,000 contacts took 9 s on SQLite).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index contacts_user_live_id on contacts (user_id, id) where deleted_at is null');
  await knex.raw('create index segment_recipients_segment_id_id on segment_recipients (segment_id, id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists segment_recipients_segment_id_id');
  await knex.raw('drop index if exists contacts_user_live_id');
}
