import request from 'supertest';
import knex from 'knex';
import { createApp } from '../../src/app';
import { createLogger } from '../../src/logger';
import { MIGRATION_NAMES } from '../../src/migrate';
import { startDueSingleSends } from '../../src/services/delivery/ledger';
import { markRelayDown, markRelayUp } from '../../src/services/delivery/relays/relays';
import { createHealthService } from '../../src/services/operations/health';
import { createOperationalCounts } from '../../src/services/operations/operational-counts';
import type { Services } from '../../src/services';
import { useHarness } from '../support/harness';
import { sendingFixtures, testWorker } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';
import { until } from '../support/processes';
import { createHeartbeat } from '../../src/workers/heartbeat';

/** The value of one series in a Prometheus text answer (undefined when the series is absent). */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const quiet = { warn: () => undefined, error: () => undefined, debug: () => undefined, deprecate: () => undefined };

describe('operator endpoints: /healthz, /readyz, /metrics', () => {
  const sink = useSmtpSink();
  // Relays on 127.0.0.1 (the relay metric's test): nothing here connects to them.
  const h = useHarness({ RELAY_ALLOW_PRIVATE: '1' });
  const logger = createLogger('silent');

  /** An app of the same runtime with some services replaced (each app has its own metrics registry). */
  const appWith = (services: Partial<Services>, config = {}) =>
    createApp({ config: { ...h.runtime.config, ...config }, services: { ...h.runtime.services, ...services }, logger });

  test('when the process runs then /healthz answers ok, and the worker heartbeat age once a worker has beaten', async () => {
    const before = await request(h.runtime.app).get('/healthz').expect(200);
    expect(before.body).toEqual({ status: 'ok', worker_heartbeat_age_seconds: null });

    await h.runtime.services.health.beat('test-worker-1', 'worker', new Date());
    const after = await request(h.runtime.app).get('/healthz').expect(200);
    expect(after.body).toEqual({ status: 'ok', worker_heartbeat_age_seconds: expect.any(Number) });
    expect(after.body.worker_heartbeat_age_seconds).toBeGreaterThanOrEqual(0);
    expect(after.body.worker_heartbeat_age_seconds).toBeLessThan(60);
  });

  test('when a worker runs then its heartbeat row is written at start and kept until it stops', async () => {
    const heartbeat = createHeartbeat({ health: h.runtime.services.health, logger }, 'test-worker-2', 'worker', 60_000);
    heartbeat.start();
    try {
      await until(async () => Boolean(await h.runtime.db('worker_heartbeats').where({ owner: 'test-worker-2' }).first()), 10_000, 'the heartbeat row');
    } finally {
      await heartbeat.stop();
    }
    const row = await h.runtime.db('worker_heartbeats').where({ owner: 'test-worker-2' }).first();
    expect(row.role).toBe('worker');
  });

  test('when the database answers and every migration is applied then /readyz is 200', async () => {
    const res = await request(h.runtime.app).get('/readyz').expect(200);
    expect(res.body).toEqual({ status: 'ready', database: 'ok', schema: 'current', worker_heartbeat_age_seconds: expect.any(Number) });
  });

  test('when a migration of this build is missing, or the database has one it does not know, then /readyz is 503 with the reason', async () => {
    const db = h.runtime.db;
    const newer = appWith({ health: createHealthService({ db, migrationNames: [...MIGRATION_NAMES, '20991231_0000_from-the-future'] }) });
    const behind = await request(newer).get('/readyz').expect(503);
    expect(behind.body).toMatchObject({ status: 'unavailable', database: 'ok', schema: 'behind' });
    expect(behind.body.reason).toBe('schema behind: 1 migration(s) not applied (20991231_0000_from-the-future)');

    const older = appWith({ health: createHealthService({ db, migrationNames: MIGRATION_NAMES.slice(0, -1) }) });
    const ahead = await request(older).get('/readyz').expect(503);
    expect(ahead.body).toMatchObject({ status: 'unavailable', schema: 'ahead' });
    expect(ahead.body.reason).toContain(MIGRATION_NAMES[MIGRATION_NAMES.length - 1]);
  });

  test('when the database does not answer then /readyz is 503 and /healthz still 200', async () => {
    const nowhere = knex({ client: 'pg', connection: 'postgres://nobody@127.0.0.1:1/none', pool: { min: 0, max: 1 }, acquireConnectionTimeout: 2000, log: quiet });
    try {
      const app = appWith({ health: createHealthService({ db: nowhere, migrationNames: MIGRATION_NAMES }) });
      const res = await request(app).get('/readyz').expect(503);
      expect(res.body).toMatchObject({ status: 'unavailable', database: 'unreachable', schema: 'unknown', worker_heartbeat_age_seconds: null });
      expect(res.body.reason).toMatch(/^database unreachable: /);
      await request(app).get('/healthz').expect(200, { status: 'ok', worker_heartbeat_age_seconds: null });
    } finally {
      await nowhere.destroy();
    }
  });

  test('when METRICS_TOKEN is set then /metrics needs it as a bearer token', async () => {
    const app = appWith({}, { metricsToken: 'metrics-secret' });
    await request(app).get('/metrics').expect(401);
    await request(app).get('/metrics').set('Authorization', 'Bearer wrong').expect(401);
    await request(app).get('/metrics').set('Authorization', 'Basic metrics-secret').expect(401);
    const res = await request(app).get('/metrics').set('Authorization', 'Bearer metrics-secret').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  test('when a send is queued and then sent then the metrics count its messages and the queue', async () => {
    const account = await h.account();
    const f = sendingFixtures(h);
    const userId = account.user_id;
    const senderId = await f.sender(userId);
    const groupId = await f.group(userId);
    const typeId = await h.runtime.services.contactTypes.add({ userId }, { name: 'Metrics' });
    for (const n of [1, 2, 3]) await f.contact(userId, typeId, `m${n}@metrics.test`, { first_name: `M${n}` });
    await f.singleSend(userId, { senderId, groupId, to: [{ contactType: typeId }] });
    // Every scrape reads the database afresh here, so the test sees each change at once.
    const app = appWith({ operationalCounts: createOperationalCounts({ db: h.runtime.db }, { maxAgeMs: 0 }) });
    const scrape = async () => (await request(app).get('/metrics').expect(200)).text;

    const start = await scrape();
    expect(start).toContain('# TYPE campaign_messages_total counter');
    expect(start).toContain('# TYPE campaign_relay_up gauge');
    expect(sample(start, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    const queuedBefore = sample(start, 'campaign_messages_total{state="queued"}')!;
    const deliveredBefore = sample(start, 'campaign_messages_total{state="delivered"}')!;
    expect(sample(start, 'campaign_webhook_backlog')).toBe(0);

    await startDueSingleSends(h.runtime.db, new Date());
    const queued = await scrape();
    expect(sample(queued, 'campaign_queue_messages')).toBe(3);
    expect(sample(queued, 'campaign_messages_total{state="queued"}')).toBe(queuedBefore + 3);

    const worker = testWorker(h, sink.url);
    try {
      await worker.worker.runOnce();
    } finally {
      await worker.close();
    }
    const sent = await scrape();
    expect(sample(sent, 'campaign_queue_messages')).toBe(0);
    expect(sample(sent, 'campaign_messages_total{state="delivered"}')).toBe(deliveredBefore + 3);
  });

  test('when a relay is marked down after failures then campaign_relay_up says 0 for it and 1 for the others, labelled by id and name', async () => {
    const account = await h.account();
    const relay = (name: string) => h.runtime.services.relays.save({ userId: account.user_id }, { name, kind: 'smtp', url: 'smtp://127.0.0.1:2525', api_key: null, region: null, endpoint: null, max_rate: 0, priority: 0, domains: [] });
    const [healthy, failing] = [await relay('Healthy'), await relay('Failing')];
    const app = appWith({ operationalCounts: createOperationalCounts({ db: h.runtime.db }, { maxAgeMs: 0 }) });
    const scrape = async () => (await request(app).get('/metrics').expect(200)).text;
    const series = (r: { id: number; name: string }) => `campaign_relay_up{relay="${r.id}",name="${r.name}"}`;

    const before = await scrape();
    expect([sample(before, series(healthy)), sample(before, series(failing))]).toEqual([1, 1]);
    await markRelayDown(h.runtime.db, failing.id, '421 4.7.0 Try again later');
    const after = await scrape();
    expect([sample(after, series(healthy)), sample(after, series(failing))]).toEqual([1, 0]);
    await markRelayUp(h.runtime.db, failing.id);
    expect(sample(await scrape(), series(failing))).toBe(1);
  });

  test('when requests are answered then their durations are labelled by route pattern, never by the raw path', async () => {
    const account = await h.account();
    const app = appWith({});
    await request(app).get('/api/v1/contacts-type').set(account.headers).expect(200);
    await request(app).get('/api/v1/contacts/details?contact_id=987654').set(account.headers);
    await request(app).get('/unsubscribe/not-a-token-4242');
    await request(app).get('/no-such-page-31337');
    const text = (await request(app).get('/metrics').expect(200)).text;
    expect(sample(text, 'http_request_duration_seconds_count{method="GET",route="/api/v1/contacts-type",status_code="200"}')).toBe(1);
    expect(text).toMatch(/http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/contacts\/details",status_code="\d+"\} 1/);
    expect(text).toMatch(/http_request_duration_seconds_count\{method="GET",route="\/unsubscribe\/:token",status_code="\d+"\} 1/);
    expect(text).toMatch(/http_request_duration_seconds_count\{method="GET",route="unmatched",status_code="404"\} 1/);
    for (const raw of ['987654', 'not-a-token-4242', '31337']) expect(text).not.toContain(raw);
  });

  test('when the figures are read twice within their age then the database is read once', async () => {
    const counts = createOperationalCounts({ db: h.runtime.db }, { maxAgeMs: 60_000 });
    const first = await counts.read();
    const account = await h.account();
    const f = sendingFixtures(h);
    const typeId = await h.runtime.services.contactTypes.add({ userId: account.user_id }, { name: 'Cached' });
    await f.contact(account.user_id, typeId, 'c1@cached.test');
    await f.singleSend(account.user_id, { senderId: await f.sender(account.user_id), groupId: await f.group(account.user_id), to: [{ contactType: typeId }] });
    await startDueSingleSends(h.runtime.db, new Date());
    expect(await counts.read()).toBe(first);
    expect((await createOperationalCounts({ db: h.runtime.db }, { maxAgeMs: 0 }).read()).queue).toBe(first.queue + 1);
  });
});
