import type { Knex } from 'knex';

/**
 * On SQLite, an index for the contact list's search (a substring of the email or of the full
 * name, ignoring case), which otherwise reads every contact of the account: `contacts_search`,
 * an FTS5 table with the trigram tokenizer over the email and `first_name || ' ' || last_name`
 * (the expression the search matches), keyed by the contact's id. Contentless (it keeps only
 * the index, not a second copy of the text) and without positions (`detail = none`: half the
 * size, and cheaper to write), kept by triggers on contacts, so every write path keeps it in
 * its own transaction, and filled here from the contacts already there. A search of three
 * characters or more asks it for the contacts holding every trigram of the term and checks
 * them with the same LIKE as before (src/db/expressions.ts, contactSearchCandidates); a prefix
 * is a substring, so it serves both.
 *
 * PostgreSQL has its trigram indexes (20261126_2331_large-accounts): nothing to do there.
 */
export async function up(knex: Knex): Promise<void> {
  if (knex.client.config.client === 'pg') return;
  await knex.raw(`create virtual table contacts_search using fts5(email, full_name, tokenize = 'trigram', content = '', contentless_delete = 1, detail = none)`);
  await knex.raw(`insert into contacts_search (rowid, email, full_name) select id, email, first_name || ' ' || last_name from contacts`);
  await knex.raw(`create trigger contacts_search_insert after insert on contacts begin
    insert into contacts_search (rowid, email, full_name) values (new.id, new.email, new.first_name || ' ' || new.last_name);
  end`);
  // An upsert that leaves the searched text as it was (most rows of a re-import) costs nothing here.
  await knex.raw(`create trigger contacts_search_update after update of email, first_name, last_name on contacts
    when old.email is not new.email or old.first_name is not new.first_name or old.last_name is not new.last_name begin
    delete from contacts_search where rowid = old.id;
    insert into contacts_search (rowid, email, full_name) values (new.id, new.email, new.first_name || ' ' || new.last_name);
  end`);
  await knex.raw(`create trigger contacts_search_delete after delete on contacts begin
    delete from contacts_search where rowid = old.id;
  end`);
}

export async function down(knex: Knex): Promise<void> {
  if (knex.client.config.client === 'pg') return;
  for (const event of ['insert', 'update', 'delete']) await knex.raw(`drop trigger if exists contacts_search_${event}`);
  await knex.raw('drop table if exists contacts_search');
}
