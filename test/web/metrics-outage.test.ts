import fs from 'node:fs';
import type { Knex } from 'knex';
import request from 'supertest';
import { createLogger } from '../../src/logger';
import { createHeartbeat } from '../../src/workers/heartbeat';
import { Harness, useHarness } from '../support/harness';
import { until } from '../support/processes';
import { adminDb } from '../support/test-db';

/** The value of one series in a Prometheus text answer (undefined when the series is absent). */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

type PoolClient = { acquireConnection(): Promise<{ close(): void }>; releaseConnection(conn: unknown): Promise<void> };

/**
 * Cuts this file's own database off from the service, as an outage does, and answers how to bring
 * it back. PostgreSQL: the database stops taking connections and the service's are ended.
 * SQLite: the service's connection is closed and the file's place holds a directory (a volume
 * gone), so no connection can open it. Other test files' databases are not touched.
 */
async function cutOff(h: Harness): Promise<() => Promise<void>> {
  const { databaseUrl, sqliteFile } = h.runtime.config;
  if (databaseUrl) {
    const name = new URL(databaseUrl).pathname.slice(1);
    const admin = adminDb(process.env.DATABASE_URL!);
    await admin.raw('alter database ?? with allow_connections false', [name]);
    // A connection still starting as the door closed may get through: end them until none is left.
    await until(async () => {
      const { rows } = await admin.raw('select pg_terminate_backend(pid) from pg_stat_activity where datname = ? and pid <> pg_backend_pid()', [name]);
      return rows.length === 0;
    }, 10_000, 'every connection to the test database to end');
    return async () => {
      await admin.raw('alter database ?? with allow_connections true', [name]);
      await admin.destroy();
    };
  }
  const client = (h.runtime.db as Knex & { client: PoolClient }).client;
  const connection = await client.acquireConnection();
  connection.close();
  await client.releaseConnection(connection);
  fs.renameSync(sqliteFile, `${sqliteFile}.away`);
  fs.mkdirSync(sqliteFile);
  return async () => {
    fs.rmdirSync(sqliteFile);
    fs.renameSync(`${sqliteFile}.away`, sqliteFile);
  };
}

describe('/metrics while the database cannot be reached', () => {
  const h = useHarness();

  test('when the database goes away then campaign_database_up is 0 and the worker heartbeat age keeps growing; when it is back, 1 again', async () => {
    const scrape = async () => (await request(h.runtime.app).get('/metrics').expect(200)).text;
    const heartbeat = createHeartbeat({ health: h.runtime.services.health, logger: createLogger('silent') }, 'outage-worker', 'worker', 50);
    heartbeat.start();
    let restore: (() => Promise<void>) | undefined;
    try {
      await until(async () => sample(await scrape(), 'campaign_worker_heartbeat_age_seconds') !== undefined, 20_000, 'a heartbeat in the metrics');
      expect(sample(await scrape(), 'campaign_database_up')).toBe(1);

      restore = await cutOff(h);
      // The worker goes on trying to beat; no beat can land while the database is away.
      const during = await scrape();
      expect(sample(during, 'campaign_database_up')).toBe(0);
      const age = sample(during, 'campaign_worker_heartbeat_age_seconds')!;
      expect(age).toBeGreaterThanOrEqual(0);
      await until(async () => {
        const later = await scrape();
        return sample(later, 'campaign_database_up') === 0 && sample(later, 'campaign_worker_heartbeat_age_seconds')! >= age + 0.5;
      }, 20_000, 'the heartbeat age to grow while the database is away');
    } finally {
      await restore?.();
      await heartbeat.stop();
    }
    await until(async () => sample(await scrape(), 'campaign_database_up') === 1, 20_000, 'the database to be up again');
  }, 60_000);
});
