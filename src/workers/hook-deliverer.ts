import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { skipLocked } from '../db/locking';
import { BATCHED_HOOK_EVENTS, HOOK_DELIVERY, HOOK_DELIVERY_STATE, HookEventType } from '../lib/constants';
import { openSecret, randomToken } from '../lib/crypto';
import { isPublicAddress, publicLookup } from '../lib/public-address';
import { timestamp } from '../lib/time';
import { hookEventId } from '../services/integrations/hook-outbox';
import { HOOK_SECRET_PURPOSE } from '../services/integrations/outgoing-webhooks';
import { Sleeper } from './sleeper';

export interface HookDelivererDeps {
  db: Knex;
  config: Pick<Config, 'webhookAllowPrivate'>;
  logger: Logger;
  /** The app secret the endpoints' signing secrets are sealed with. */
  secret: string;
}

export interface HookDelivererOptions {
  /** Events in one batched request at most (message.delivered, opened, clicked). */
  batchSize?: number;
  /** Requests to one endpoint per turn before another endpoint gets a worker. */
  postsPerTurn?: number;
  timeoutMs?: number;
  /** How long a worker holds an endpoint; longer than a turn can take (postsPerTurn × timeout). */
  leaseMs?: number;
  /** Endpoints served at once by this process. */
  lanes?: number;
  pollMs?: number;
  /** The clock of retries and leases (tests move it instead of waiting); signatures use real time. */
  now?: () => Date;
}

export interface HookDeliverer {
  readonly owner: string;
  /** Delivers everything due now, then returns (tests). */
  runOnce(): Promise<void>;
  start(): void;
  /** Finishes the requests in hand and returns. */
  stop(): Promise<void>;
}

interface Endpoint {
  id: number;
  user_id: number;
  url: string;
  secret_sealed: string;
}

interface DeliveryRow {
  id: number;
  user_id: number;
  event_id: string;
  event_type: HookEventType;
  message_id: string | null;
  data: string;
  attempts: number;
  created_at: unknown;
}

/** What one request came to. */
interface PostResult {
  ok: boolean;
  code: number | null;
  error: string | null;
}

/** Delay before attempt `attempts + 1`: doubling from retryBaseMs up to retryMaxMs, ±20% jitter. */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number {
  const base = Math.min(HOOK_DELIVERY.retryMaxMs, HOOK_DELIVERY.retryBaseMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(base * (0.8 + 0.4 * random()));
}

/**
 * `webhook-signature` of the Standard Webhooks specification: `v1,` and the base64 HMAC-SHA256
 * of `id.timestamp.body` under the secret's bytes (the base64 after `whsec_`).
 */
export function signature(secret: string, id: string, seconds: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${crypto.createHmac('sha256', key).update(`${id}.${seconds}.${body}`).digest('base64')}`;
}

/**
 * The outgoing webhooks' worker: takes an endpoint with due deliveries under a lease (one
 * worker per endpoint at a time, on PostgreSQL with SKIP LOCKED, so several worker processes
 * never post the same event at once), posts its due events one request at a time, and records
 * each outcome. Batched types go up to `batchSize` events a request; a contact's events go in
 * the order they happened (a later one waits while an earlier one is pending). A failed request
 * is retried with backoff for 24 hours from the event, then the delivery is failed.
 */
export function createHookDeliverer(deps: HookDelivererDeps, options: HookDelivererOptions = {}): HookDeliverer {
  const { db, logger } = deps;
  const batchSize = options.batchSize ?? HOOK_DELIVERY.batchSize;
  const postsPerTurn = options.postsPerTurn ?? 10;
  const timeoutMs = options.timeoutMs ?? HOOK_DELIVERY.timeoutMs;
  const leaseMs = options.leaseMs ?? postsPerTurn * timeoutMs + 60_000;
  const lanes = options.lanes ?? 2;
  const pollMs = options.pollMs ?? 1000;
  const now = options.now ?? (() => new Date());
  const owner = `${process.pid}-${randomToken(6)}`;
  const allowPrivate = deps.config.webhookAllowPrivate;
  const lookup = publicLookup(allowPrivate);
  const sleeper = new Sleeper();
  let running = false;
  let loops: Promise<void>[] = [];

  const due = (at: string) =>
    db('webhook_deliveries as d').whereRaw('d.endpoint_id = webhook_endpoints.id').where('d.state', HOOK_DELIVERY_STATE.pending).where('d.next_attempt_at', '<=', at);

  /**
   * Leases the endpoint whose due work has waited longest: since its oldest due event became
   * due, or since the endpoint was last served (released) when that is later. A failing
   * endpoint goes to the back after each turn, so it never holds up another account's events.
   * Written as one CASE over plain comparisons, which both dialects read alike (no NULLS
   * FIRST, which knex writes on SQLite in a way that drops the column's order).
   */
  async function claim(): Promise<Endpoint | undefined> {
    const at = now().toISOString();
    const dueSince = due(at).min('d.next_attempt_at');
    const pick = skipLocked(
      db,
      db('webhook_endpoints')
        .where((q) => q.whereNull('lease_until').orWhere('lease_until', '<=', at))
        .whereExists(due(at).select(db.raw('1')))
        .orderByRaw('case when webhook_endpoints.lease_until > (?) then webhook_endpoints.lease_until else (?) end', [dueSince, dueSince])
        .orderBy('id')
        .limit(1)
        .select('id'),
    );
    const rows = await db('webhook_endpoints')
      .whereIn('id', pick)
      .update({ lease_owner: owner, lease_until: new Date(now().getTime() + leaseMs).toISOString() })
      .returning(['id', 'user_id', 'url', 'secret_sealed']);
    return rows[0] as Endpoint | undefined;
  }

  async function release(endpoint: Endpoint): Promise<void> {
    await db('webhook_endpoints').where({ id: endpoint.id, lease_owner: owner }).update({ lease_owner: null, lease_until: now().toISOString() });
  }

  /** The next request's events: a batch already formed, or a new one of the first due event's type. */
  async function nextGroup(endpoint: Endpoint): Promise<DeliveryRow[]> {
    const at = now().toISOString();
    const earlier = db('webhook_deliveries as e')
      .select(db.raw('1'))
      .whereRaw('e.endpoint_id = d.endpoint_id and e.contact_key = d.contact_key and e.id < d.id')
      .where('e.state', HOOK_DELIVERY_STATE.pending);
    const rows: DeliveryRow[] = await db('webhook_deliveries as d')
      .where({ 'd.endpoint_id': endpoint.id, 'd.state': HOOK_DELIVERY_STATE.pending })
      .where('d.next_attempt_at', '<=', at)
      .where((q) => q.whereNull('d.contact_key').orWhereNotExists(earlier))
      .orderBy('d.id')
      .limit(batchSize)
      .select('d.id', 'd.user_id', 'd.event_id', 'd.event_type', 'd.message_id', 'd.data', 'd.attempts', 'd.created_at');
    const head = rows[0];
    if (!head) return [];
    if (head.message_id !== null) {
      // A request tried before goes again as it was (same webhook-id, same events).
      return db('webhook_deliveries')
        .where({ endpoint_id: endpoint.id, message_id: head.message_id, state: HOOK_DELIVERY_STATE.pending })
        .orderBy('id')
        .select('id', 'user_id', 'event_id', 'event_type', 'message_id', 'data', 'attempts', 'created_at');
    }
    const group = rows.filter((r) => r.message_id === null && r.event_type === head.event_type);
    const messageId = hookEventId();
    await db('webhook_deliveries').whereIn('id', group.map((r) => r.id)).whereNull('message_id').update({ message_id: messageId });
    return group.map((r) => ({ ...r, message_id: messageId }));
  }

  /** The request body: one event, or for a batched type `data.events` (each with its own id). */
  function payloadOf(group: DeliveryRow[]): { id: string; body: string } {
    const head = group[0];
    const id = head.message_id ?? head.event_id;
    const common = { id, type: head.event_type, created_at: timestamp(head.created_at), account_id: Number(head.user_id) };
    const data = BATCHED_HOOK_EVENTS.has(head.event_type)
      ? { events: group.map((r) => ({ id: r.event_id, created_at: timestamp(r.created_at), data: JSON.parse(r.data) })) }
      : JSON.parse(head.data);
    return { id, body: JSON.stringify({ ...common, data }) };
  }

  function post(endpoint: Endpoint, id: string, body: string): Promise<PostResult> {
    let url: URL;
    try {
      url = new URL(endpoint.url);
    } catch {
      return Promise.resolve({ ok: false, code: null, error: 'the URL is not valid' });
    }
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal) && !allowPrivate && !isPublicAddress(literal)) {
      return Promise.resolve({ ok: false, code: null, error: `${literal} is a private address` });
    }
    const seconds = Math.floor(Date.now() / 1000);
    const secret = openSecret(deps.secret, HOOK_SECRET_PURPOSE, endpoint.secret_sealed);
    const client = url.protocol === 'https:' ? https : http;
    return new Promise((resolve) => {
      const request = client.request(
        url,
        {
          method: 'POST',
          lookup: lookup as unknown as http.RequestOptions['lookup'],
          signal: AbortSignal.timeout(timeoutMs),
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'user-agent': 'campaign-service-webhooks/1',
            'webhook-id': id,
            'webhook-timestamp': String(seconds),
            'webhook-signature': signature(secret, id, seconds, body),
          },
        },
        (response) => {
          const code = response.statusCode ?? 0;
          response.resume();
          response.on('end', () => resolve({ ok: code >= 200 && code < 300, code, error: code >= 200 && code < 300 ? null : `the endpoint answered ${code}` }));
          response.on('error', (err) => resolve({ ok: false, code, error: err.message }));
        },
      );
      request.on('error', (err: NodeJS.ErrnoException) => {
        const timedOut = err.name === 'AbortError' || err.name === 'TimeoutError';
        resolve({ ok: false, code: null, error: timedOut ? `no answer within ${timeoutMs / 1000} s` : err.message.slice(0, 500) });
      });
      request.end(body);
    });
  }

  async function record(group: DeliveryRow[], result: PostResult): Promise<void> {
    const at = now();
    const ids = group.map((r) => r.id);
    const attempts = Number(group[0].attempts) + 1;
    const base = { attempts, response_code: result.code, updated_at: at.toISOString() };
    if (result.ok) {
      await db('webhook_deliveries').whereIn('id', ids).update({ ...base, state: HOOK_DELIVERY_STATE.delivered, last_error: null, delivered_at: at.toISOString() });
      return;
    }
    const next = new Date(at.getTime() + retryDelayMs(attempts));
    const giveUpAt = new Date(new Date(String(timestamp(group[0].created_at))).getTime() + HOOK_DELIVERY.retryForMs);
    const final = next > giveUpAt;
    await db('webhook_deliveries')
      .whereIn('id', ids)
      .update({ ...base, last_error: result.error, state: final ? HOOK_DELIVERY_STATE.failed : HOOK_DELIVERY_STATE.pending, next_attempt_at: final ? null : next.toISOString() });
  }

  /** One endpoint's turn: 'none' when no endpoint had due work, else whether anything was posted. */
  async function turn(): Promise<'none' | 'idle' | 'posted'> {
    const endpoint = await claim();
    if (!endpoint) return 'none';
    let posted = false;
    try {
      for (let i = 0; i < postsPerTurn; i += 1) {
        const group = await nextGroup(endpoint);
        if (!group.length) break;
        const { id, body } = payloadOf(group);
        const result = await post(endpoint, id, body);
        await record(group, result);
        posted = true;
        // A failing endpoint is left alone until its next retry is due: no hammering.
        if (!result.ok) break;
      }
    } finally {
      await release(endpoint);
    }
    return posted ? 'posted' : 'idle';
  }

  async function lane(): Promise<void> {
    while (running) {
      try {
        if ((await turn()) !== 'posted') await sleeper.sleep(pollMs);
      } catch (err) {
        logger.error({ err }, 'delivering webhooks failed; trying again shortly');
        await sleeper.sleep(pollMs);
      }
    }
  }

  return {
    owner,
    async runOnce() {
      // An endpoint whose due events all wait behind a contact's earlier one posts nothing:
      // stop once every endpoint had a turn without posting.
      const [{ n }] = await db('webhook_endpoints').count({ n: '*' });
      let idle = 0;
      for (;;) {
        const result = await turn();
        if (result === 'none') return;
        idle = result === 'idle' ? idle + 1 : 0;
        if (idle > Number(n)) return;
      }
    },
    start() {
      if (running) return;
      running = true;
      loops = Array.from({ length: lanes }, lane);
      logger.info({ owner, lanes }, 'webhook deliverer started');
    },
    async stop() {
      if (!running) return;
      running = false;
      sleeper.wakeAll();
      await Promise.all(loops);
    },
  };
}
