import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import knex from 'knex';
import { PROJECT_ROOT } from '../../src/lib/paths';
import { withDefaultUser } from '../../src/db';

/**
 * Each test file gets its own database, copied from a template that the global setup
 * migrated and seeded once: a file copy on SQLite, `CREATE DATABASE … TEMPLATE` on PostgreSQL.
 */
export const TMP_DIR = path.join(PROJECT_ROOT, 'test', '.tmp');

export function runId(): string {
  const id = process.env.CC_TEST_RUN;
  if (!id) throw new Error('CC_TEST_RUN is not set: run the tests through jest (global setup)');
  return id;
}

export function templateName(): string {
  return `cc_tpl_${runId()}`;
}

export function sqliteTemplateFile(): string {
  return path.join(TMP_DIR, `${templateName()}.sqlite3`);
}

/** The same server as DATABASE_URL, another database name. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export function adminDb(url: string) {
  return knex({ client: 'pg', connection: withDefaultUser(url), pool: { min: 0, max: 1 } });
}

export interface TestDatabase {
  databaseUrl: string | undefined;
  sqliteFile: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const suffix = crypto.randomBytes(4).toString('hex');
  const baseUrl = process.env.DATABASE_URL;
  if (baseUrl) {
    const name = `cc_t_${runId()}_${suffix}`;
    const admin = adminDb(baseUrl);
    try {
      await admin.raw(`create database ${name} template ${templateName()}`);
    } finally {
      await admin.destroy();
    }
    return {
      databaseUrl: withDatabase(baseUrl, name),
      sqliteFile: '',
      async drop() {
        const dropper = adminDb(baseUrl);
        try {
          await dropper.raw(`drop database if exists ${name} with (force)`);
        } finally {
          await dropper.destroy();
        }
      },
    };
  }
  const file = path.join(TMP_DIR, `cc_t_${runId()}_${suffix}.sqlite3`);
  fs.copyFileSync(sqliteTemplateFile(), file);
  return {
    databaseUrl: undefined,
    sqliteFile: file,
    async drop() {
      for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
    },
  };
}
