import type { Knex } from 'knex';

/**
 * What one account of ten million contacts needs.
 *
 * - On both databases, the opens and the clicks of a single send by the send: its report charts
 *   them over time, and without these it reads every ledger row of the send to find the few
 *   opened or clicked (half a second for a send of a million). Partial, so a message enters
 *   them only when it is first opened or clicked, and writing the ledger costs nothing more.
 *
 * On PostgreSQL only (SQLite keeps counting and scanning: its databases stay far smaller):
 * - `contact_counts`: the live contacts of each account and type as rows of signed deltas, written
 *   by statement-level triggers on contacts (one row per type a statement changes, from its
 *   transition tables), so every write path keeps them exact in its own transaction without a
 *   hot row to lock: readers sum an account's rows and fold them into one row per type now and
 *   then (src/db/contact-counts.ts). The list's total and `GET /contacts-type` read them instead
 *   of counting millions of index entries. Derived data: backups leave it out, the triggers
 *   rebuild it as a restore writes the contacts.
 * - `pg_trgm` GIN indexes on the email and on the full name, which serve the list's search (a
 *   substring, so a prefix too, ignoring case); a search on the first or last name is a search
 *   on the full name, which contains both.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index send_messages_single_opened on send_messages (single_send_id, opened_at) where opened_at is not null');
  await knex.raw('create index send_messages_single_clicked on send_messages (single_send_id, clicked_at) where clicked_at is not null');
  if (knex.client.config.client !== 'pg') return;
  await knex.raw(`create table contact_counts (
    user_id integer not null,
    contact_type_id integer not null,
    n bigint not null
  )`);
  await knex.raw('create index contact_counts_user_type on contact_counts (user_id, contact_type_id)');
  await knex.raw(`create function contact_counts_inserted() returns trigger language plpgsql as $$
    begin
      insert into contact_counts (user_id, contact_type_id, n)
        select user_id, contact_type_id, count(*) from contact_rows_new where deleted_at is null group by 1, 2;
      return null;
    end $$`);
  await knex.raw(`create function contact_counts_deleted() returns trigger language plpgsql as $$
    begin
      insert into contact_counts (user_id, contact_type_id, n)
        select user_id, contact_type_id, -count(*) from contact_rows_old where deleted_at is null group by 1, 2;
      return null;
    end $$`);
  await knex.raw(`create function contact_counts_updated() returns trigger language plpgsql as $$
    begin
      insert into contact_counts (user_id, contact_type_id, n)
        select user_id, contact_type_id, sum(n) from (
          select user_id, contact_type_id, 1 as n from contact_rows_new where deleted_at is null
          union all
          select user_id, contact_type_id, -1 from contact_rows_old where deleted_at is null
        ) d group by 1, 2 having sum(n) <> 0;
      return null;
    end $$`);
  await knex.raw(`create function contact_counts_truncated() returns trigger language plpgsql as $$
    begin
      delete from contact_counts;
      return null;
    end $$`);
  await knex.raw(`create trigger contact_counts_insert after insert on contacts
    referencing new table as contact_rows_new for each statement execute function contact_counts_inserted()`);
  await knex.raw(`create trigger contact_counts_delete after delete on contacts
    referencing old table as contact_rows_old for each statement execute function contact_counts_deleted()`);
  await knex.raw(`create trigger contact_counts_update after update on contacts
    referencing old table as contact_rows_old new table as contact_rows_new for each statement execute function contact_counts_updated()`);
  await knex.raw('create trigger contact_counts_truncate after truncate on contacts for each statement execute function contact_counts_truncated()');
  await knex.raw(`insert into contact_counts (user_id, contact_type_id, n)
    select user_id, contact_type_id, count(*) from contacts where deleted_at is null group by 1, 2`);

  await knex.raw('create extension if not exists pg_trgm');
  await knex.raw('create index contacts_email_trgm on contacts using gin (email gin_trgm_ops)');
  await knex.raw(`create index contacts_full_name_trgm on contacts using gin ((first_name || ' ' || last_name) gin_trgm_ops)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists send_messages_single_clicked');
  await knex.raw('drop index if exists send_messages_single_opened');
  if (knex.client.config.client !== 'pg') return;
  await knex.raw('drop index if exists contacts_full_name_trgm');
  await knex.raw('drop index if exists contacts_email_trgm');
  for (const event of ['insert', 'delete', 'update', 'truncate']) await knex.raw(`drop trigger if exists contact_counts_${event} on contacts`);
  for (const fn of ['inserted', 'deleted', 'updated', 'truncated']) await knex.raw(`drop function if exists contact_counts_${fn}()`);
  await knex.raw('drop table if exists contact_counts');
}
