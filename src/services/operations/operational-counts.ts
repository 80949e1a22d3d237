import type { ServiceDeps } from '../context';
import { toCount } from '../../db/dialect';
import { HOOK_DELIVERY_STATE, MESSAGE_STATE } from '../../lib/constants';
import { COUNTERS } from '../delivery/ledger';
import { lastHeartbeat } from './health';

/** The message outcomes the metrics report, each the sum of one counter of every send and automation. */
export const MESSAGE_COUNT_STATES = {
  queued: COUNTERS.triggered,
  delivered: COUNTERS.delivered,
  bounced: COUNTERS.bounced,
  failed: COUNTERS.failed,
  unsubscribed: COUNTERS.unsubscribed,
} as const;

export type MessageCountState = keyof typeof MESSAGE_COUNT_STATES;

export interface OperationalCounts {
  /** Messages of all single sends and automations by outcome, as their statistics count them. */
  messages: Record<MessageCountState, number>;
  /** Ledger rows due now and not yet sent (what a worker would claim). */
  queue: number;
  /** Outgoing webhook events not yet delivered. */
  webhookBacklog: number;
  lastHeartbeat: Date | null;
  /** Every relay of every account, up (1) unless it is marked down now. */
  relays: Array<{ id: number; name: string; up: 0 | 1 }>;
}

/** How long one reading serves every scrape (and every process's /healthz). */
const DEFAULT_MAX_AGE_MS = 5000;

/**
 * The figures the metrics read from the database, by a handful of aggregate queries over
 * small tables (sends, automations) and partial indexes (the ledger's claimable rows, the
 * pending webhook deliveries), at most once per `maxAgeMs` however often they are scraped;
 * scrapes that arrive while a reading is under way share it.
 */
export function createOperationalCounts(deps: Pick<ServiceDeps, 'db'>, options: { maxAgeMs?: number; now?: () => Date } = {}) {
  const { db } = deps;
  const maxAgeMs = options.maxAgeMs ?? DEFAULT_MAX_AGE_MS;
  const now = options.now ?? (() => new Date());
  let cached: { at: number; counts: OperationalCounts } | undefined;
  let reading: Promise<OperationalCounts> | undefined;

  async function sums(table: 'single_sends' | 'automations', owner: 'send' | 'automation'): Promise<Record<MessageCountState, number>> {
    const states = Object.keys(MESSAGE_COUNT_STATES) as MessageCountState[];
    const row = await db(table)
      .first(states.map((state) => db.raw('coalesce(sum(??), 0) as ??', [MESSAGE_COUNT_STATES[state][owner], state])));
    return Object.fromEntries(states.map((state) => [state, toCount(row?.[state])])) as Record<MessageCountState, number>;
  }

  async function read(): Promise<OperationalCounts> {
    const at = now().toISOString();
    const [sends, automations, queue, backlog, heartbeat, relays] = await Promise.all([
      sums('single_sends', 'send'),
      sums('automations', 'automation'),
      db('send_messages').whereIn('state', [MESSAGE_STATE.queued, MESSAGE_STATE.sending]).where('available_at', '<=', at).count({ n: '*' }).first(),
      db('webhook_deliveries').where({ state: HOOK_DELIVERY_STATE.pending }).count({ n: '*' }).first(),
      lastHeartbeat(db),
      db('relays').orderBy('id').select('id', 'name', 'down_until'),
    ]);
    const messages = Object.fromEntries(
      (Object.keys(sends) as MessageCountState[]).map((state) => [state, sends[state] + automations[state]]),
    ) as Record<MessageCountState, number>;
    const nowMs = Date.parse(at);
    return {
      messages,
      queue: toCount(queue?.n),
      webhookBacklog: toCount(backlog?.n),
      lastHeartbeat: heartbeat,
      relays: relays.map((r: { id: number; name: string; down_until: unknown }) => ({
        id: Number(r.id),
        name: String(r.name),
        up: r.down_until && new Date(String(r.down_until)).getTime() > nowMs ? 0 : 1,
      })),
    };
  }

  return {
    /** The latest reading, taken now if the last one is older than `maxAgeMs`. */
    async read(): Promise<OperationalCounts> {
      if (cached && Date.now() - cached.at < maxAgeMs) return cached.counts;
      reading ??= read()
        .then((counts) => {
          cached = { at: Date.now(), counts };
          return counts;
        })
        .finally(() => {
          reading = undefined;
        });
      return reading;
    },
  };
}

export type OperationalCountsService = ReturnType<typeof createOperationalCounts>;
