import express, { Request, RequestHandler, Router } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Config } from '../config';
import { safeEqual } from '../lib/crypto';
import type { Services } from '../services';
import { ageSeconds } from '../services/operations/health';
import { MESSAGE_COUNT_STATES, MessageCountState } from '../services/operations/operational-counts';

const onHeaders = require('on-headers') as (res: unknown, listener: () => void) => void;

/** The `route` label of a request no route answered (static files, 404s, the API's 405s). */
export const UNMATCHED_ROUTE = 'unmatched';

/** How long a probe waits for the database before it answers without it. */
const HEALTH_WAIT_MS = 1000;
const READY_WAIT_MS = 5000;
/** How long a scrape waits for the database: its answer, then its figures (Prometheus gives a scrape 10 s). */
const SCRAPE_PING_WAIT_MS = 2000;
const SCRAPE_READING_WAIT_MS = 4000;

/** Resolves to `fallback` when `work` takes longer than `ms`; leaves no timer behind. */
async function within<T>(work: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The route pattern that answered (`/api/v1/contacts/:id`), read when the answer's headers go
 * out, while the request is still inside the router that matched it; never the raw URL, so the
 * label's values are as few as the routes.
 */
function routeOf(req: Request): string {
  if (!req.route) return UNMATCHED_ROUTE;
  const path: unknown = req.route.path;
  return `${req.baseUrl}${typeof path === 'string' ? path : String(path)}`;
}

/** What a probe answers: its HTTP status and JSON body (the Maintenance page shows the same). */
export interface ProbeAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** `/healthz`: the process runs, whatever the database does; the worker heartbeat's age when it can be read. */
export async function healthAnswer(services: Pick<Services, 'health'>): Promise<ProbeAnswer> {
  const heartbeat = await within(services.health.lastHeartbeat().catch(() => null), HEALTH_WAIT_MS, null);
  return { status: 200, body: { status: 'ok', worker_heartbeat_age_seconds: ageSeconds(heartbeat, new Date()) } };
}

/** `/readyz`: whether this process can serve (database up, schema current), 503 with the reason when not. */
export async function readinessAnswer(services: Pick<Services, 'health'>): Promise<ProbeAnswer> {
  const ready = await within(services.health.readiness(), READY_WAIT_MS, {
    ready: false,
    reason: `database did not answer within ${READY_WAIT_MS / 1000} s`,
    database: 'unreachable' as const,
    schema: 'unknown' as const,
    workerHeartbeatAgeSeconds: null,
  });
  return {
    status: ready.ready ? 200 : 503,
    body: {
      status: ready.ready ? 'ready' : 'unavailable',
      ...(ready.reason ? { reason: ready.reason } : {}),
      database: ready.database,
      schema: ready.schema,
      worker_heartbeat_age_seconds: ready.workerHeartbeatAgeSeconds,
    },
  };
}

/**
 * The operator's endpoints, outside the API: `/healthz` (the process runs), `/readyz` (it can
 * serve: database up, schema current), `/metrics` (Prometheus). Each app has its own registry,
 * so several apps in one process (the tests) do not share or clash over metrics.
 */
export function createOperations(config: Config, services: Services): { timing: RequestHandler; router: Router } {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const counts = services.operationalCounts;
  // A failed or late reading (the database is down) leaves the figures at their last values:
  // campaign_database_up says so, and the heartbeat's age goes on growing from the last beat seen.
  const reading = () => within(counts.read().catch(() => undefined), SCRAPE_READING_WAIT_MS, undefined);
  let newestBeat: Date | null = null;

  new Gauge({
    name: 'campaign_database_up',
    help: 'Whether the database answered a trivial query at this scrape within 2 s (1) or not (0)',
    registers: [registry],
    async collect() {
      this.set(await within(services.health.ping().then(() => 1, () => 0), SCRAPE_PING_WAIT_MS, 0));
    },
  });
  new Counter({
    name: 'campaign_messages_total',
    help: 'Messages of all single sends and automations by outcome, as their statistics count them (read from the database at most every few seconds)',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const now = await reading();
      if (!now) return;
      this.reset();
      for (const state of Object.keys(MESSAGE_COUNT_STATES) as MessageCountState[]) this.inc({ state }, now.messages[state]);
    },
  });
  new Gauge({
    name: 'campaign_queue_messages',
    help: 'Messages due now and not yet sent (what the workers would claim next)',
    registers: [registry],
    async collect() {
      const now = await reading();
      if (now) this.set(now.queue);
    },
  });
  new Gauge({
    name: 'campaign_webhook_backlog',
    help: 'Outgoing webhook events not yet delivered',
    registers: [registry],
    async collect() {
      const now = await reading();
      if (now) this.set(now.webhookBacklog);
    },
  });
  new Gauge({
    name: 'campaign_worker_heartbeat_age_seconds',
    help: 'Seconds since the newest heartbeat of any sending worker this process has seen (absent until a worker has run); grows while the database cannot be read',
    registers: [registry],
    async collect() {
      const beat = (await reading())?.lastHeartbeat ?? null;
      if (beat && (!newestBeat || beat > newestBeat)) newestBeat = beat;
      const age = ageSeconds(newestBeat, new Date());
      if (age !== null) this.set(age);
    },
  });
  new Gauge({
    name: 'campaign_relay_up',
    help: 'Whether each relay is taking mail (1) or marked down after failures and skipped until its backoff ends (0)',
    labelNames: ['relay', 'name'],
    registers: [registry],
    async collect() {
      const now = await reading();
      if (!now) return;
      this.reset();
      for (const relay of now.relays) this.set({ relay: String(relay.id), name: relay.name }, relay.up);
    },
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer HTTP requests, by route pattern',
    labelNames: ['method', 'route', 'status_code'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });

  const timing: RequestHandler = (req, res, next) => {
    const end = duration.startTimer();
    let route = UNMATCHED_ROUTE;
    onHeaders(res, () => {
      route = routeOf(req);
    });
    res.once('close', () => end({ method: req.method, route, status_code: res.statusCode }));
    next();
  };

  const router = express.Router();
  router.get('/healthz', async (_req, res) => {
    const answer = await healthAnswer(services);
    res.status(answer.status).set('Cache-Control', 'no-store').json(answer.body);
  });
  router.get('/readyz', async (_req, res) => {
    const answer = await readinessAnswer(services);
    res.status(answer.status).set('Cache-Control', 'no-store').json(answer.body);
  });
  router.get('/metrics', async (req, res) => {
    if (config.metricsToken) {
      const [scheme, token] = (req.get('Authorization') ?? '').split(' ');
      if (scheme?.toLowerCase() !== 'bearer' || !token || !safeEqual(token, config.metricsToken)) {
        res.status(401).set('WWW-Authenticate', 'Bearer realm="metrics"').type('text/plain').send('Unauthorized\n');
        return;
      }
    }
    res.set('Cache-Control', 'no-store').type(registry.contentType).send(await registry.metrics());
  });
  return { timing, router };
}
