import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { claimMessages } from '../db/locking';
import { MESSAGE_KIND, MESSAGE_STATE } from '../lib/constants';
import { randomToken } from '../lib/crypto';
import { createSigner } from '../lib/signed-token';
import { AutomationHooks, runAutomations } from './automations';
import { recordOutcomes, Outcome } from './outcomes';
import { AccountRateLimiter } from './rate-limit';
import { Sleeper } from './sleeper';
import { LEDGER_COLUMNS, LedgerRow, MessageSources, sourceKey } from './sources';
import { startDueSingleSends, StartHooks } from './start-sends';
import { suppressedRowIds } from './suppression';
import { VOID_SYSTEM_MAIL } from './system-mail';
import { classifySendError, MailTransport } from './transport';

/** Things the worker tells the rest of the service about (events become notification mail). */
export interface WorkerHooks extends AutomationHooks, StartHooks {}

export interface WorkerDeps {
  db: Knex;
  config: Pick<Config, 'baseUrl' | 'mailRate'>;
  logger: Logger;
  secret: string;
  transport: MailTransport;
  hooks?: WorkerHooks;
}

export interface WorkerOptions {
  /** Ledger rows per claim. */
  batchSize?: number;
  /** Batches in flight at once, so one batch's tail overlaps the next one's head. */
  lanes?: number;
  /** How long a claimed row stays with this worker before others may take it. */
  leaseMs?: number;
  /** Attempts before a message that keeps failing with 4xx is given up. */
  maxAttempts?: number;
  /** First retry delay; doubles with every attempt up to retryMaxMs. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Idle wait between looks for work. */
  pollMs?: number;
  /** Outcomes written per ledger transaction. */
  flushEvery?: number;
  /** How often the background loop looks at automations (enrolment compares whole targets). */
  automationsEveryMs?: number;
  /** The clock (tests move it instead of waiting). */
  now?: () => Date;
}

export interface SendingWorker {
  readonly owner: string;
  /** Starts due sends and automation steps, then sends every message due now, then returns (tests). */
  runOnce(): Promise<void>;
  /** Keeps working in the background until stop(). */
  start(): void;
  /** Finishes the messages in hand, records them and returns; leaves no timer running. */
  stop(): Promise<void>;
}

export function createSendingWorker(deps: WorkerDeps, options: WorkerOptions = {}): SendingWorker {
  const { db, logger, transport, hooks = {} } = deps;
  const batchSize = options.batchSize ?? 200;
  const lanes = options.lanes ?? 2;
  const leaseMs = options.leaseMs ?? 5 * 60_000;
  const maxAttempts = options.maxAttempts ?? 5;
  const retryBaseMs = options.retryBaseMs ?? 60_000;
  const retryMaxMs = options.retryMaxMs ?? 3_600_000;
  const pollMs = options.pollMs ?? 1000;
  const flushEvery = options.flushEvery ?? 100;
  const automationsEveryMs = options.automationsEveryMs ?? 5000;
  let automationsRanAt = 0;
  const now = options.now ?? (() => new Date());
  const owner = `${process.pid}-${randomToken(6)}`;

  const sleeper = new Sleeper();
  const limiter = new AccountRateLimiter(deps.config.mailRate, (ms) => sleeper.sleep(ms));
  const sources = new MessageSources(db, createSigner(deps.secret), deps.config.baseUrl);
  let running = false;
  let loops: Promise<void>[] = [];
  // Rows claimed and not yet recorded: their lease is renewed while this worker lives.
  const inHand = new Set<number>();

  // Outcomes are written in small transactions, one after another, while sending goes on.
  let pending: Outcome[] = [];
  let writing: Promise<void> = Promise.resolve();
  const flush = (): Promise<void> => {
    if (!pending.length) return writing;
    const batch = pending;
    pending = [];
    for (const o of batch) inHand.delete(o.id);
    writing = writing.then(async () => {
      try {
        await recordOutcomes(db, batch, {
          owner,
          now: now(),
          maxAttempts,
          retryDelayMs: (attempts) => Math.min(retryMaxMs, retryBaseMs * 2 ** Math.max(0, attempts - 1)),
          onCompleted: hooks.singleSendCompleted,
        });
      } catch (err) {
        // The rows stay leased and are sent again after the lease: at most twice, never lost.
        logger.error({ err }, 'recording send outcomes failed');
      }
    });
    return writing;
  };
  const record = (outcome: Outcome) => {
    pending.push(outcome);
    if (pending.length >= flushEvery) void flush();
  };

  async function tick(always: boolean): Promise<number> {
    const started = (await startDueSingleSends(db, now(), hooks)).length;
    if (!always && Date.now() - automationsRanAt < automationsEveryMs) return started;
    automationsRanAt = Date.now();
    return started + (await runAutomations(db, now(), hooks));
  }

  async function claim(): Promise<LedgerRow[]> {
    const at = now();
    const rows = await claimMessages(db, {
      limit: batchSize,
      now: at.toISOString(),
      leaseUntil: new Date(at.getTime() + leaseMs).toISOString(),
      owner,
      columns: LEDGER_COLUMNS,
    });
    for (const row of rows) inHand.add(Number(row.id));
    return rows as unknown as LedgerRow[];
  }

  /** Extends the lease of the rows in hand, so only a dead worker's rows are taken over. */
  async function renewLeases(): Promise<void> {
    const ids = [...inHand];
    const leaseUntil = new Date(now().getTime() + leaseMs).toISOString();
    for (let i = 0; i < ids.length; i += 500) {
      await db('send_messages')
        .whereIn('id', ids.slice(i, i + 500))
        .where({ state: MESSAGE_STATE.sending, lease_owner: owner })
        .update({ available_at: leaseUntil });
    }
  }

  async function sendBatch(rows: LedgerRow[]): Promise<void> {
    const { sources: bySource, people } = await sources.prepare(rows);
    const groupOf = (row: LedgerRow) => {
      const key = sourceKey(row);
      return key ? (bySource.get(key)?.groupId ?? null) : null;
    };
    const suppressed = await suppressedRowIds(db, rows, groupOf);

    let next = 0;
    const sendNext = async (): Promise<void> => {
      while (next < rows.length) {
        const row = rows[next++];
        const id = Number(row.id);
        const person = people(row);
        if (suppressed.has(id) || person.deleted_at) {
          record({ id, result: 'suppressed', error: 'unsubscribed, bounced or deleted before sending' });
          continue;
        }
        if (row.attempts > maxAttempts) {
          record({ id, result: 'retry', attempts: row.attempts, code: null, error: 'too many attempts (the worker stopped while sending)' });
          continue;
        }
        try {
          const key = sourceKey(row);
          const source = key ? bySource.get(key) : undefined;
          if (row.kind !== MESSAGE_KIND.system && !source) throw new Error('the message has no source');
          const message = source ? sources.build(row, source, person) : await sources.buildSystem(row);
          if (!message) {
            record({ id, result: 'suppressed', error: VOID_SYSTEM_MAIL });
            continue;
          }
          await limiter.take(Number(row.user_id));
          await transport.send(message);
          record({ id, result: 'sent' });
        } catch (err) {
          const failure = classifySendError(err);
          if (failure.outcome === 'bounce') {
            record({ id, result: 'bounce', userId: Number(row.user_id), emailKey: row.email_key, code: failure.code, error: failure.message });
          } else {
            record({ id, result: 'retry', attempts: Number(row.attempts), code: failure.code, error: failure.message });
          }
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(transport.concurrency, rows.length) }, sendNext));
    await flush();
  }

  async function drain(): Promise<void> {
    for (;;) {
      const rows = await claim();
      if (!rows.length) return;
      await sendBatch(rows);
    }
  }

  async function lane(): Promise<void> {
    while (running) {
      try {
        const rows = await claim();
        if (rows.length) await sendBatch(rows);
        else await sleeper.sleep(pollMs);
      } catch (err) {
        logger.error({ err }, 'sending failed; trying again shortly');
        await sleeper.sleep(pollMs);
      }
    }
  }

  async function heartbeat(): Promise<void> {
    while (running) {
      await sleeper.sleep(Math.max(100, Math.floor(leaseMs / 3)));
      // In turn with the outcome writes, so the two never wait on each other's rows.
      writing = writing.then(() => renewLeases().catch((err) => logger.error({ err }, 'renewing leases failed')));
      await writing;
    }
  }

  async function ticker(): Promise<void> {
    while (running) {
      try {
        // New work wakes the lanes at once instead of after their idle wait.
        if ((await tick(false)) > 0) sleeper.wakeAll();
      } catch (err) {
        logger.error({ err }, 'starting due sends failed');
      }
      if (running) await sleeper.sleep(pollMs);
    }
  }

  return {
    owner,
    async runOnce() {
      await tick(true);
      await drain();
      await flush();
    },
    start() {
      if (running) return;
      running = true;
      loops = [ticker(), heartbeat(), ...Array.from({ length: lanes }, lane)];
      logger.info({ owner, lanes, batchSize }, 'sending worker started');
    },
    async stop() {
      if (!running) return;
      running = false;
      sleeper.wakeAll();
      await Promise.all(loops);
      await flush();
      logger.info({ owner }, 'sending worker stopped');
    },
  };
}
