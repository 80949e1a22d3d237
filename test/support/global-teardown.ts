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
      // Exactly this run's (`cc_tpl_<id>`, `cc_t_<id>_…`, `cc_r_<id>_…`), never another run's whose id starts alike.
      const { rows } = await admin.raw(`select datname from pg_database where datname ~ ?`, [`^cc_[a-z]+_${id}(_|$)`]);
      for (const { datname } of rows as { datname: string }[]) {
        await admin.raw(`drop database if exists "${datname}" with (force)`);
      }
    } finally {
      await admin.destroy();
    }
  }
  if (fs.existsSync(TMP_DIR)) {
    for (const f of fs.readdirSync(TMP_DIR)) {
      if (new RegExp(`_${id}([_.-]|$)`).test(f)) fs.rmSync(path.join(TMP_DIR, f), { force: true, recursive: true });
    }
  }
}
