import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import Papa from 'papaparse';
import { Client } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { createDb, withDefaultUser } from '../../src/db';
import { insertId, nowValue } from '../../src/db/dialect';
import { migrateAndSeed } from '../../src/migrate';
import { DbKind, freshDb, seconds } from './server';

/**
 * The limits `bench:import` prints beside the project's figures, measured on the same
 * file, on this machine, in the same run:
 * - SQLite: papaparse streaming the file into better-sqlite3 through one prepared upsert into
 *   the migrated `contacts` table (same schema and indexes), 2,000 rows per transaction as the import commits. No HTTP,
 *   no validation beyond an `@` in the email, no country lookup, no summary: what an import
 *   costs with nothing but the parser and the database. Target: ≥0.9 of it.
 * - PostgreSQL: raw COPY of the file into an unindexed table of text columns, which no import
 *   that checks and merges rows can beat (it shows what bounds the import; the target is
 *   ≥100,000 rows/s).
 */
export interface ImportLimit {
  label: string;
  rowsPerSecond: number;
}

const COLUMNS = ['first_name', 'last_name', 'email', 'alt_email', 'country', 'state', 'city', 'address_line1', 'address_line2', 'state_province_region', 'postal_code', 'age', 'joined'];
const BATCH = 2000;

interface Statement {
  run(...values: unknown[]): unknown;
}
interface SqliteDatabase {
  pragma(text: string): unknown;
  prepare(sql: string): Statement;
  transaction<T>(fn: (arg: T) => void): (arg: T) => void;
  close(): void;
}
// better-sqlite3 has no type declarations installed; these are the calls used here.
const Database = require('better-sqlite3') as new (file: string) => SqliteDatabase;

/** Migrates the database and adds an account with one contact type, for a limit to import into. */
async function migratedAccount(options: { databaseUrl: string | undefined; sqliteFile: string }): Promise<{ userId: number; typeId: number }> {
  const knexDb = createDb(options);
  try {
    await migrateAndSeed(knexDb);
    const stamp = { created_at: nowValue(), updated_at: nowValue() };
    const userId = await insertId(knexDb, 'accounts', {
      name: 'Limit', email: 'limit@example.com', email_key: 'limit@example.com', password_hash: 'x',
      public_key: `pk_${crypto.randomBytes(8).toString('hex')}`, secret_key_hash: 'x', ...stamp,
    });
    return { userId, typeId: await insertId(knexDb, 'contact_types', { user_id: userId, name: 'Limit', ...stamp }) };
  } finally {
    await knexDb.destroy();
  }
}

async function sqliteUpsertLimit(csv: string, rows: number): Promise<ImportLimit> {
  const db = await freshDb('sqlite', 'import-limit');
  try {
    const file = db.env.SQLITE_FILE;
    const { userId, typeId } = await migratedAccount({ databaseUrl: undefined, sqliteFile: file });
    const sqlite = new Database(file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    const upsert = sqlite.prepare(
      `insert into contacts (user_id, contact_type_id, first_name, last_name, email, email_key, alt_email, state, city,
         address_line1, address_line2, state_province_region, postal_code, custom_fields, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       on conflict (user_id, email_key) where deleted_at is null do update set
         first_name = excluded.first_name, last_name = excluded.last_name, email = excluded.email, alt_email = excluded.alt_email,
         state = excluded.state, city = excluded.city, address_line1 = excluded.address_line1, address_line2 = excluded.address_line2,
         state_province_region = excluded.state_province_region, postal_code = excluded.postal_code,
         custom_fields = excluded.custom_fields, updated_at = excluded.updated_at`,
    );
    const writeBatch = sqlite.transaction((batch: Record<string, string>[]) => {
      const now = new Date().toISOString();
      for (const r of batch) {
        if (!r.email || !r.email.includes('@')) continue;
        upsert.run(
          userId, typeId, r.first_name ?? '', r.last_name ?? '', r.email, r.email.toLowerCase(), r.alt_email || null, r.state ?? '', r.city ?? '',
          r.address_line1 ?? '', r.address_line2 ?? '', r.state_province_region ?? '', r.postal_code ?? '',
          JSON.stringify({ age: r.age, joined: r.joined }), now, now,
        );
      }
    });
    const start = process.hrtime.bigint();
    let batch: Record<string, string>[] = [];
    let seen = 0;
    await new Promise<void>((resolve, reject) => {
      Papa.parse<Record<string, string>>(fs.createReadStream(csv), {
        header: true,
        skipEmptyLines: true,
        step: (result) => {
          batch.push(result.data);
          seen += 1;
          if (batch.length === BATCH) {
            writeBatch(batch);
            batch = [];
          }
        },
        complete: () => {
          if (batch.length > 0) writeBatch(batch);
          resolve();
        },
        error: reject,
      });
    });
    const took = seconds(start);
    sqlite.close();
    if (seen !== rows) throw new Error(`the SQLite limit read ${seen} rows, not ${rows}`);
    return { label: 'papaparse → better-sqlite3, prepared upsert into contacts, 2,000 rows per transaction', rowsPerSecond: rows / took };
  } finally {
    await db.drop();
  }
}

async function pgCopyLimit(csv: string, rows: number): Promise<ImportLimit> {
  const db = await freshDb('postgres', 'import-limit');
  const client = new Client({ connectionString: withDefaultUser(db.env.DATABASE_URL) });
  await client.connect();
  try {
    await client.query(`create table raw_rows (${COLUMNS.map((c) => `${c} text`).join(', ')})`);
    const start = process.hrtime.bigint();
    await pipeline(fs.createReadStream(csv), client.query(copyFrom(`copy raw_rows (${COLUMNS.join(', ')}) from stdin with (format csv, header true)`)));
    const took = seconds(start);
    const { rows: counted } = await client.query<{ n: string }>('select count(*) as n from raw_rows');
    if (Number(counted[0].n) !== rows) throw new Error(`raw COPY loaded ${counted[0].n} rows, not ${rows}`);
    return { label: 'raw COPY of the file into an unindexed table of text columns', rowsPerSecond: rows / took };
  } finally {
    await client.end();
    await db.drop();
  }
}

/**
 * What the database alone takes to merge the file into the migrated `contacts` table (same
 * schema, indexes and constraints) on PostgreSQL: raw COPY into an unlogged text table, then one
 * set-based upsert of its rows with an `@` in the email (the last line of an email wins), in one
 * backend. No HTTP, no parsing in node, no validation, no country lookup, no summary. Printed
 * beside the import to show what bounds it.
 */
export async function pgMergeLimit(csv: string, rows: number): Promise<ImportLimit> {
  const db = await freshDb('postgres', 'import-merge');
  const client = new Client({ connectionString: withDefaultUser(db.env.DATABASE_URL) });
  try {
    const { userId, typeId } = await migratedAccount({ databaseUrl: db.env.DATABASE_URL, sqliteFile: '' });
    await client.connect();
    await client.query(`create unlogged table raw_rows (${COLUMNS.map((c) => `${c} text`).join(', ')})`);
    const start = process.hrtime.bigint();
    await pipeline(fs.createReadStream(csv), client.query(copyFrom(`copy raw_rows (${COLUMNS.join(', ')}) from stdin with (format csv, header true)`)));
    const copied = seconds(start);
    const set = ['first_name', 'last_name', 'email', 'alt_email', 'state', 'city', 'address_line1', 'address_line2', 'state_province_region', 'postal_code', 'custom_fields', 'updated_at'];
    await client.query(
      `insert into contacts (user_id, contact_type_id, first_name, last_name, email, email_key, alt_email, state, city,
         address_line1, address_line2, state_province_region, postal_code, custom_fields, created_at, updated_at)
       select distinct on (lower(email) collate "C") $1::integer, $2::integer, coalesce(first_name, ''), coalesce(last_name, ''), email, lower(email), nullif(alt_email, ''),
         coalesce(state, ''), coalesce(city, ''), coalesce(address_line1, ''), coalesce(address_line2, ''), coalesce(state_province_region, ''), coalesce(postal_code, ''),
         jsonb_build_object('age', age, 'joined', joined), now(), now()
       from raw_rows where email like '%@%' order by lower(email) collate "C", ctid desc
       on conflict (user_id, email_key) where deleted_at is null do update set ${set.map((c) => `${c} = excluded.${c}`).join(', ')}`,
      [userId, typeId],
    );
    const took = seconds(start);
    return { label: `raw COPY into an unlogged text table (${(copied / took * 100).toFixed(0)}% of the time), then one upsert of its rows into contacts, one backend`, rowsPerSecond: rows / took };
  } finally {
    await client.end();
    await db.drop();
  }
}

/** The limit of an import of the standard file (bench/lib/contacts-csv.ts's columns) on `kind`. */
export function importLimit(kind: DbKind, csv: string, rows: number): Promise<ImportLimit> {
  if (path.extname(csv) !== '.csv') throw new Error(`${csv} is not a CSV file`);
  return kind === 'sqlite' ? sqliteUpsertLimit(csv, rows) : pgCopyLimit(csv, rows);
}
