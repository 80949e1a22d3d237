import type { Knex } from 'knex';
import { domainToASCII } from 'node:url';

/**
 * Data only: stored `email_key`s whose domain is not ASCII take the domain's IDNA ASCII form,
 * the form emailKey() now gives (`user@bücher.example` → `user@xn--bcher-kva.example`), so
 * both spellings of a domain are one address. The rule is copied here on purpose: a landed
 * migration must not change when src/ does.
 *
 * Where the new key meets a row that already has it under the same unique key, the two rows
 * say the same thing: an unsubscribe, suppression, notification recipient, segment member or
 * enrolment row is removed (the other stays); a live contact is soft-deleted (restorable; the
 * contact already keyed in ASCII form stays); an account or a send's ledger row keeps its old key
 * (history, or a sign-in that must not change owner). Each case is counted on stderr.
 */
const ASCII = /^[\x00-\x7f]*$/;

function idnaKey(key: string): string {
  const at = key.lastIndexOf('@');
  const domain = key.slice(at + 1);
  if (at < 0 || ASCII.test(domain)) return key;
  return `${key.slice(0, at)}@${domainToASCII(domain) || domain}`;
}

interface KeyTable {
  table: string;
  /** The columns that, with email_key, are unique. */
  scope: string[];
  /** Extra condition of the unique index. */
  live?: (q: Knex.QueryBuilder) => Knex.QueryBuilder;
  onConflict: 'delete' | 'soft-delete' | 'keep';
}

const TABLES: KeyTable[] = [
  { table: 'accounts', scope: [], onConflict: 'keep' },
  { table: 'contacts', scope: ['user_id'], live: (q) => q.whereNull('deleted_at'), onConflict: 'soft-delete' },
  { table: 'global_unsubscribes', scope: ['user_id'], onConflict: 'delete' },
  { table: 'unsubscribe_group_recipients', scope: ['unsubscribe_groups_id'], onConflict: 'delete' },
  { table: 'segment_recipients', scope: ['segment_id'], onConflict: 'delete' },
  { table: 'notification_recipients', scope: ['user_id'], onConflict: 'delete' },
  { table: 'suppressed_addresses', scope: ['user_id'], onConflict: 'delete' },
  { table: 'automation_enrolments', scope: ['automation_id'], onConflict: 'delete' },
  { table: 'send_messages', scope: ['single_send_id'], live: (q) => q.whereNotNull('single_send_id'), onConflict: 'keep' },
];

export async function up(knex: Knex): Promise<void> {
  const postgres = knex.client.config.client === 'pg';
  // Characters ≠ bytes: the key has a non-ASCII character (the only keys the new rule changes).
  const nonAscii = postgres ? 'length(email_key) <> octet_length(email_key)' : 'length(email_key) <> length(cast(email_key as blob))';
  for (const { table, scope, live, onConflict } of TABLES) {
    const counts = { changed: 0, merged: 0 };
    let after = 0;
    for (;;) {
      const rows: Record<string, unknown>[] = await knex(table)
        .where('id', '>', after)
        .whereRaw(nonAscii)
        .orderBy('id')
        .limit(500)
        .select(['id', 'email_key', ...scope, ...(table === 'contacts' ? ['deleted_at'] : [])]);
      if (rows.length === 0) break;
      after = Number(rows[rows.length - 1].id);
      for (const row of rows) {
        const key = idnaKey(String(row.email_key));
        if (key === row.email_key) continue;
        const inIndex = !(table === 'contacts' && row.deleted_at) && !(table === 'send_messages' && row.single_send_id === null);
        let clash = false;
        if (inIndex) {
          let other = knex(table).where({ email_key: key }).whereNot({ id: row.id });
          for (const column of scope) other = other.where(column, row[column] as never);
          if (live) other = live(other);
          clash = Boolean(await other.first('id'));
        }
        if (!clash) {
          await knex(table).where({ id: row.id }).update({ email_key: key });
          counts.changed += 1;
        } else if (onConflict === 'delete') {
          await knex(table).where({ id: row.id }).delete();
          counts.merged += 1;
        } else if (onConflict === 'soft-delete') {
          const now = new Date().toISOString();
          await knex(table).where({ id: row.id }).update({ email_key: key, deleted_at: now, updated_at: now });
          counts.merged += 1;
        } else {
          counts.merged += 1;
        }
      }
    }
    if (counts.merged > 0) {
      const what = { delete: 'removed as duplicates', 'soft-delete': 'soft-deleted as duplicates', keep: 'kept their old key' }[onConflict];
      process.stderr.write(`migration idna-email-keys: ${table}: ${counts.changed} keys changed, ${counts.merged} rows ${what}\n`);
    }
  }
}

export async function down(): Promise<void> {
  // The ASCII form is as good a key as the old one for the code before this migration.
}
