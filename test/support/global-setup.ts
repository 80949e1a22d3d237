import fs from 'node:fs';
import { createDb } from '../../src/db';
import { migrateAndSeed } from '../../src/migrate';
import { adminDb, sqliteTemplateFile, templateName, TMP_DIR, withDatabase } from './test-db';

/** Migrates and seeds one template database per run; every test file copies it. */
export default async function globalSetup(): Promise<void> {
  process.env.CC_TEST_RUN = `${process.pid}`;
  fs.mkdirSync(TMP_DIR, { recursive: true });
  const baseUrl = process.env.DATABASE_URL;
  if (baseUrl) {
    const admin = adminDb(baseUrl);
    try {
      await admin.raw(`drop database if exists ${templateName()} with (force)`);
      await admin.raw(`create database ${templateName()}`);
    } finally {
      await admin.destroy();
    }
    const db = createDb({ databaseUrl: withDatabase(baseUrl, templateName()), sqliteFile: '' });
    try {
      await migrateAndSeed(db);
    } finally {
      await db.destroy();
    }
    return;
  }
  const file = sqliteTemplateFile();
  for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
  const db = createDb({ databaseUrl: undefined, sqliteFile: file });
  try {
    await migrateAndSeed(db);
    await db.raw('pragma wal_checkpoint(TRUNCATE)');
  } finally {
    await db.destroy();
  }
}
