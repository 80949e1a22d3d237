import fs from 'node:fs';
import path from 'node:path';
import { adminDb, runId, TMP_DIR } from './test-db';

/** Drops the template and whatever a crashed test file left behind. */
export default async function globalTeardown(): Promise<void> {
  const id = runId();
  const baseUrl = process.env.DATABASE_URL;
  if (baseUrl) {
    const admin = adminDb(baseUrl);
    try {
      const { rows } = await admin.raw(`select datname from pg_database where datname like ?`, [`cc\\_%\\_${id}%`]);
      for (const { datname } of rows as { datname: string }[]) {
        await admin.raw(`drop database if exists "${datname}" with (force)`);
      }
    } finally {
      await admin.destroy();
    }
  }
  if (fs.existsSync(TMP_DIR)) {
    for (const f of fs.readdirSync(TMP_DIR)) {
      if (f.includes(`_${id}`)) fs.rmSync(path.join(TMP_DIR, f), { force: true, recursive: true });
    }
  }
}
