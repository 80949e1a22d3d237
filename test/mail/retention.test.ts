import request from 'supertest';
import { isPostgres } from '../../src/db';
import { createRetentionService } from '../../src/services/maintenance/retention';
import { createMaintenanceJob } from '../../src/workers/maintenance';
import { sendingFixtures, testWorker, useSendingSetup } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { until, useServiceProcesses } from '../support/processes';
import { useSmtpSink } from '../support/smtp';

const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36';
const DAY = 24 * 3600_000;
/** The statistics of a send as the API shows them. */
const TOTALS = ['triggered', 'delivered', 'unique_opens', 'total_opens', 'unique_clicks', 'total_clicks', 'bounces', 'unsubscribes'];

/** The worker's maintenance job pruning by RETENTION_*_DAYS, batch by batch, on the real database. */
describe('retention: the maintenance job prunes old data and keeps the totals', () => {
  const h = useHarness();
  const f = sendingFixtures(h);
  const sink = useSmtpSink({ emptyBeforeEach: true });
  const processes = useServiceProcesses(h, 'retention');
  const web = () => request(h.runtime.app);
  const setup = useSendingSetup(h, 'Readers');
  const alice = setup.account;

  beforeAll(async () => {
    for (const name of ['ann', 'ben', 'cat']) await f.contact(alice.user_id, setup.type, `${name}@example.org`, { first_name: name });
  });

  /** The maintenance job as the worker runs it, with these settings and its clock `days` ahead. */
  function job(retention: { events: number; messages: number; webhookDeliveries: number }, days: number) {
    const service = createRetentionService({ db: h.runtime.db, config: { ...h.runtime.config, retention }, logger: h.runtime.logger });
    return createMaintenanceJob({ retention: service, logger: h.runtime.logger }, { now: () => new Date(Date.now() + days * DAY), batchSize: 50 });
  }

  /** A completed send to the three readers; ann opens and clicks, ben clicks twice. */
  async function sentAndRead(): Promise<{ sendId: number; utr: string; messages: Record<string, number> }> {
    const sendId = await f.singleSend(alice.user_id, { senderId: setup.sender, groupId: setup.group, to: [{ contactType: setup.type }], html: '<html><body><a href="https://shop.example/sale">Sale</a></body></html>' });
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);
    expect((await f.send(sendId)).status).toBe(3);
    const messages = Object.fromEntries((await f.ledger(sendId)).map((m) => [String(m.email).split('@')[0], Number(m.id)]));
    const link = (who: string) => new URL(/href="([^"]+\/c\/[^"]+)"/.exec(String(sink.messages.find((m) => m.to[0] === `${who}@example.org`)!.parsed.html))![1]).pathname;
    await web().get(`/open/${f.token(messages.ann)}.gif`).set('User-Agent', CHROME).expect(200);
    await web().get(link('ann')).set('User-Agent', CHROME).expect(302);
    await web().get(link('ben')).set('User-Agent', CHROME).expect(302);
    await web().get(link('ben')).set('User-Agent', CHROME).expect(302);
    return { sendId, utr: String((await f.send(sendId)).utr), messages };
  }

  async function totals(utr: string): Promise<Record<string, unknown>> {
    const body = (await h.api(alice).get(`/single-send/details?utr=${utr}`).expect(200)).body.message.singleSend;
    const send = Array.isArray(body) ? body[0] : body;
    return Object.fromEntries(TOTALS.map((k) => [k, send[k]]));
  }

  const count = async (table: string, where: (q: import('knex').Knex.QueryBuilder) => void = () => undefined) =>
    Number((await h.runtime.db(table).modify(where).count({ n: '*' }))[0].n);

  test('when messages, events and deliveries are older than their settings then their rows go in batches, the send\'s totals stay, and the SQLite file shrinks', async () => {
    const db = h.runtime.db;
    const { sendId, utr } = await sentAndRead();
    const before = await totals(utr);
    expect(before).toMatchObject({ triggered: 3, delivered: 3, unique_opens: 2, unique_clicks: 2, total_clicks: 3 });
    const links = await h.runtime.services.engagement.links({ userId: alice.user_id }, { singleSendId: sendId });
    expect(links).toEqual([{ url: 'https://shop.example/sale', unique_clicks: 2, total_clicks: 3 }]);

    // The clock of the run is 100 days ahead: the send and its events are then 100 days old.
    const at = (days: number) => new Date(Date.now() + days * DAY).toISOString();
    const old = at(-1);
    const system = (created: string, state: number) => ({
      user_id: alice.user_id, kind: 3, email: 'owner@example.com', email_key: 'owner@example.com', priority: 1, state,
      payload: JSON.stringify({ subject: 'Sender verified', html: 'x'.repeat(4000) }), created_at: created, updated_at: created,
    });
    for (let i = 0; i < 300; i += 50) await db('send_messages').insert(Array.from({ length: 50 }, () => system(old, 2)));
    await db('send_messages').insert([system(at(99), 2), system(old, 0)]);
    await db('sessions').insert([
      { id: 'gone'.padEnd(64, '0'), account_id: alice.user_id, csrf_token: 'x', expires_at: at(99), created_at: old, updated_at: old },
      { id: 'kept'.padEnd(64, '0'), account_id: alice.user_id, csrf_token: 'x', expires_at: at(101), created_at: old, updated_at: old },
    ]);
    await db('provider_webhook_tokens').insert([{ provider: 'mailgun', token: 'spent', expires_at: at(99) }, { provider: 'mailgun', token: 'fresh', expires_at: at(101) }]);
    const [endpoint] = await db('webhook_endpoints').insert({ user_id: alice.user_id, url: 'https://hooks.example/in', events: '[]', secret_sealed: 'x', created_at: old, updated_at: old }).returning('id');
    const delivery = (state: number, created: string, event: string) => ({
      user_id: alice.user_id, endpoint_id: Number(typeof endpoint === 'object' ? endpoint.id : endpoint), event_id: event, event_type: 'message.delivered',
      data: '{}', state, created_at: created, updated_at: created,
    });
    await db('webhook_deliveries').insert([delivery(1, old, 'old-delivered'), delivery(2, old, 'old-failed'), delivery(0, old, 'old-pending'), delivery(1, at(95), 'recent')]);
    const pagesBefore = isPostgres(db) ? 0 : Number((await db.raw('pragma page_count'))[0].page_count);

    const pruned = await job({ events: 30, messages: 30, webhookDeliveries: 30 }, 100).runOnce();

    expect(pruned).toMatchObject({ sessions: expect.any(Number), webhookTokens: 1, engagement: 2, webhookDeliveries: 2 });
    expect(pruned.messages).toBeGreaterThanOrEqual(303);
    // The send keeps its statistics and its links' clicks; its message rows and their clicks are gone.
    expect(await totals(utr)).toEqual(before);
    expect(await h.runtime.services.engagement.links({ userId: alice.user_id }, { singleSendId: sendId })).toEqual(links);
    expect(await count('send_messages', (q) => q.where('single_send_id', sendId))).toBe(0);
    expect(await count('link_clicks')).toBe(0);
    // The service's own mail: the sent and old go; the recent and the still queued stay.
    expect(await count('send_messages', (q) => q.where({ kind: 3, user_id: alice.user_id }))).toBe(2);
    expect(await db('sessions').whereIn('id', ['gone'.padEnd(64, '0'), 'kept'.padEnd(64, '0')]).pluck('id')).toEqual(['kept'.padEnd(64, '0')]);
    expect(await db('provider_webhook_tokens').orderBy('token').pluck('token')).toEqual(['fresh']);
    expect(await db('webhook_deliveries').orderBy('id').pluck('event_id')).toEqual(['old-pending', 'recent']);
    if (!isPostgres(db)) {
      expect(Number((await db.raw('pragma freelist_count'))[0].freelist_count)).toBe(0);
      expect(Number((await db.raw('pragma page_count'))[0].page_count)).toBeLessThan(pagesBefore - 200);
      expect(pruned.freedPages).toBeGreaterThan(200);
    }
    // A second run finds nothing more.
    expect(await job({ events: 30, messages: 30, webhookDeliveries: 30 }, 100).runOnce()).toMatchObject({ engagement: 0, messages: 0, webhookDeliveries: 0 });
  });

  test('when only events are older than RETENTION_EVENTS_DAYS then opens and clicks go, the messages stay, and a later open or click adds to the totals only', async () => {
    const { sendId, utr, messages } = await sentAndRead();
    const before = await totals(utr);
    expect(await h.runtime.services.resends.nonOpenerCount({ userId: alice.user_id }, utr)).toBe(1);
    const people = (kind: 'opened' | 'clicked') => h.runtime.services.engagement.people({ userId: alice.user_id }, { singleSendId: sendId }, kind, { page: 1, perPage: 10 });
    expect((await people('clicked')).rows).toHaveLength(2);

    // Settings of 0 keep everything: nothing goes.
    expect(await job({ events: 0, messages: 0, webhookDeliveries: 0 }, 100).runOnce()).toMatchObject({ engagement: 0, messages: 0 });
    // 200 days kept: the events are 100 days old, nothing goes.
    expect(await job({ events: 200, messages: 0, webhookDeliveries: 0 }, 100).runOnce()).toMatchObject({ engagement: 0 });
    expect(await job({ events: 30, messages: 0, webhookDeliveries: 0 }, 100).runOnce()).toMatchObject({ engagement: 2, messages: 0 });

    const nonOpeners = () => h.runtime.services.resends.nonOpenerCount({ userId: alice.user_id }, utr);
    expect(await count('send_messages', (q) => q.where('single_send_id', sendId))).toBe(3);
    expect((await people('opened')).rows).toEqual([]);
    // A resend to non-openers still leaves out ann and ben, whose opens and clicks were deleted.
    expect(await nonOpeners()).toBe(1);
    expect((await people('clicked')).rows).toEqual([]);
    expect(await count('link_clicks', (q) => q.whereIn('message_id', Object.values(messages)))).toBe(0);
    expect(await totals(utr)).toEqual(before);

    // ann opens again and clicks again: every open and click counts, none is a first again.
    await web().get(`/open/${f.token(messages.ann)}.gif`).set('User-Agent', CHROME).expect(200);
    const annLink = new URL(/href="([^"]+\/c\/[^"]+)"/.exec(String(sink.messages.find((m) => m.to[0] === 'ann@example.org')!.parsed.html))![1]).pathname;
    expect((await web().get(annLink).set('User-Agent', CHROME).expect(302)).headers.location).toBe('https://shop.example/sale');
    expect(await totals(utr)).toEqual({ ...before, total_opens: Number(before.total_opens) + 1, total_clicks: Number(before.total_clicks) + 1 });
    expect((await people('opened')).rows).toEqual([]);
    // cat had not opened before the pruning: her first open is one.
    await web().get(`/open/${f.token(messages.cat)}.gif`).set('User-Agent', CHROME).expect(200);
    expect(await totals(utr)).toMatchObject({ unique_opens: Number(before.unique_opens) + 1 });
  });

  test('when a worker process starts then its maintenance job prunes by the settings it was started with, and it stops cleanly', async () => {
    const db = h.runtime.db;
    const old = new Date(Date.now() - 40 * DAY).toISOString();
    await db('sessions').insert({ id: 'expired'.padEnd(64, '0'), account_id: alice.user_id, csrf_token: 'x', expires_at: old, created_at: old, updated_at: old });
    const [endpoint] = await db('webhook_endpoints').insert({ user_id: alice.user_id, url: 'https://hooks.example/w', events: '[]', secret_sealed: 'x', created_at: old, updated_at: old }).returning('id');
    const endpointId = Number(typeof endpoint === 'object' ? endpoint.id : endpoint);
    await db('webhook_deliveries').insert(['delivered-40-days-ago', 'delivered-now'].map((event, i) => ({
      user_id: alice.user_id, endpoint_id: endpointId, event_id: event, event_type: 'message.delivered', data: '{}', state: 1,
      created_at: i === 0 ? old : new Date().toISOString(), updated_at: old,
    })));

    const worker = processes.start(['--role=worker'], { SMTP_URL: sink.url, RETENTION_WEBHOOK_DELIVERIES_DAYS: '30' });
    await until(async () => !(await db('sessions').where({ id: 'expired'.padEnd(64, '0') }).first('id')), 20_000, 'the expired session to be pruned');
    await until(async () => (await db('webhook_deliveries').where({ endpoint_id: endpointId }).pluck('event_id')).join() === 'delivered-now', 20_000, 'the old delivery to be pruned');
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
  });
});
