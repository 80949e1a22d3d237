import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { claimMessages } from '../db/locking';
import { MESSAGE_KIND, MESSAGE_STATE } from '../lib/constants';
import { randomToken } from '../lib/crypto';
import { createSigner } from '../lib/signed-token';
import { AutomationHooks, runAutomations } from '../services/campaigns/enrolment';
import { LedgerWriter, Permits } from '../services/delivery/ledger';
import { completeSends, IN_DOUBT_TWICE, Outcome, writeLedger } from '../services/delivery/ledger';
import { AccountRateLimiter } from '../services/delivery/relays';
import { Sleeper } from './sleeper';
import { LEDGER_COLUMNS, LedgerRow } from '../services/delivery/ledger';
import { MessageSources, sourceKey } from '../services/delivery/messages';
import { startDueSingleSends, StartHooks } from '../services/delivery/ledger';
import { decideDueAbTests } from '../services/delivery/ledger';
import { suppressedRowIds } from '../services/delivery/ledger';
import { VOID_SYSTEM_MAIL } from '../services/delivery/notices';
import type { MailTransport } from '../mail/transport';
import { classifyRelayError, RelayFailure } from '../mail/relay-transports';
import { PinnedRelayMissing, RelayRefusal, RelayRouter, RelaysDown } from '../services/delivery/relays';
import type { PolicyPause } from '../services/delivery/ledger';
import { feedbackStamp } from '../mail/feedback-stamp';
import { TemplateRenderError } from '../mail/liquid';

/** Things the worker tells the rest of the service about (events become notification mail). */
export interface WorkerHooks extends AutomationHooks, StartHooks {
  /** A send was paused for its policy refusals (in the ledger write's transaction, once per send). */
  sendPausedForPolicy?(pause: PolicyPause, trx: Knex.Transaction): Promise<void>;
  /** A send was paused for messages whose template did not render (in the ledger write's transaction, once per send). */
  sendPausedForTemplateErrors?(pause: PolicyPause, trx: Knex.Transaction): Promise<void>;
}

export interface WorkerDeps {
  db: Knex;
  config: Pick<Config, 'baseUrl' | 'mailRate' | 'bounceDomain' | 'smtpUrl' | 'sendMaxAttempts' | 'sendRetryMs' | 'relayAllowPrivate' | 'dkim'> & { domains?: Pick<Config['domains'], 'requireDomainAuth'> };
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
  /** Attempts before a message that keeps failing with 4xx is given up (default: SEND_MAX_ATTEMPTS). */
  maxAttempts?: number;
  /** First retry delay; doubles with every attempt up to retryMaxMs (default: SEND_RETRY_SECONDS). */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Idle wait between looks for work. */
  pollMs?: number;
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
  const maxAttempts = options.maxAttempts ?? deps.config.sendMaxAttempts;
  const retryBaseMs = options.retryBaseMs ?? deps.config.sendRetryMs;
  const retryMaxMs = options.retryMaxMs ?? 3_600_000;
  const pollMs = options.pollMs ?? 1000;
  const automationsEveryMs = options.automationsEveryMs ?? 5000;
  let automationsRanAt = 0;
  const now = options.now ?? (() => new Date());
  const owner = `${process.pid}-${randomToken(6)}`;

  const sleeper = new Sleeper();
  const limiter = new AccountRateLimiter(db, deps.config.mailRate, (ms) => sleeper.sleep(ms));
  const sources = new MessageSources(db, createSigner(deps.secret), deps.config.baseUrl, undefined, deps.secret);
  const stamp = feedbackStamp(deps.secret, deps.config.bounceDomain, deps.config.smtpUrl);
  // Accounts' own relays; mail of accounts without one serving its From domain (and system mail) leaves through `transport`.
  const relays = new RelayRouter(db, deps.secret, deps.config, transport, (ms) => sleeper.sleep(ms), now);
  let running = false;
  let loops: Promise<void>[] = [];
  // Rows claimed and not yet recorded: their lease is renewed while this worker lives.
  const inHand = new Set<number>();

  // Sends this worker recorded outcomes of since it last looked whether they are complete.
  const unchecked = new Set<number>();
  // Outcomes and the starts of transmissions are written by group commit, a small
  // transaction every few milliseconds while sending goes on.
  const writer = new LedgerWriter(
    async (batch) => {
      const written = await writeLedger(db, batch, {
        owner,
        now: now(),
        maxAttempts,
        retryDelayMs: (attempts) => Math.min(retryMaxMs, retryBaseMs * 2 ** Math.max(0, attempts - 1)),
        deferCompletion: true,
        onPolicyPause: hooks.sendPausedForPolicy,
        onTemplateErrorPause: hooks.sendPausedForTemplateErrors,
      });
      for (const id of written.sends) unchecked.add(id);
      return written.started;
    },
    (err, batch) => {
      // The rows stay leased until it expires and are then taken over: sent at most twice, never lost.
      for (const id of batch.starts) inHand.delete(id);
      logger.error({ err }, 'recording send outcomes failed');
    },
  );
  const record = (outcome: Outcome) => {
    inHand.delete(outcome.id);
    writer.record(outcome);
  };
  // One permit per message in flight, shared by the lanes: however many batches overlap, no
  // more than the transport's concurrency are being sent and not yet recorded at any moment,
  // which bounds what a crash can send twice.
  const permits = new Permits(transport.concurrency);

  /**
   * Completes the sends whose last outcomes this worker wrote. Called when a claim came back
   * short (the queue is empty for now) and after the batch it got was recorded.
   */
  async function completeChecked(): Promise<void> {
    if (!unchecked.size) return;
    const sendIds = [...unchecked].sort((a, b) => a - b);
    unchecked.clear();
    try {
      await completeSends(db, sendIds, now(), hooks.singleSendCompleted);
    } catch (err) {
      for (const id of sendIds) unchecked.add(id);
      logger.error({ err }, 'completing sends failed');
    }
  }

  async function tick(always: boolean): Promise<number> {
    const started = (await startDueSingleSends(db, now(), hooks, { requireDomainAuth: deps.config.domains?.requireDomainAuth })).length + (await decideDueAbTests(db, now()));
    if (!always && Date.now() - automationsRanAt < automationsEveryMs) return started;
    automationsRanAt = Date.now();
    return started + (await runAutomations(db, now(), hooks, { requireDomainAuth: deps.config.domains?.requireDomainAuth }));
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
    // A slot sends one message at a time: the start of its next message is written together
    // with the outcome of its last one, and nothing goes out before that write is durable.
    const slot = async (): Promise<void> => {
      await permits.acquire();
      try {
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
          if (Number(row.unconfirmed) >= 2) {
            // In flight at two crashes already: it may have gone out twice; never a third time.
            record({ id, result: 'failed', error: IN_DOUBT_TWICE });
            continue;
          }
          try {
            const key = sourceKey(row);
            const source = key ? bySource.get(key) : undefined;
            if (row.kind !== MESSAGE_KIND.system && !source) throw new Error('the message has no source');
            const message = source ? sources.build(row, source, person, true) : await sources.buildSystem(row);
            if (!message) {
              record({ id, result: 'suppressed', error: VOID_SYSTEM_MAIL });
              continue;
            }
            await limiter.take(Number(row.user_id));
            if (!(await writer.start(id))) {
              inHand.delete(id);
              continue;
            }
            const stamped = stamp(message, id);
            const routed = row.kind === MESSAGE_KIND.system
              ? (await transport.send(stamped), { relayId: null, providerMessageId: null })
              : await relays.send(Number(row.user_id), source?.relayId, stamped);
            record({ id, result: 'sent', ...routed, linkVersion: source?.linkVersion ?? null, ...(message.templateErrors ? { templateErrors: true } : {}) });
          } catch (err) {
            if (err instanceof TemplateRenderError && err.busy) {
              record({ id, result: 'retry', attempts: Number(row.attempts), code: null, error: err.message });
              continue;
            }
            if (err instanceof TemplateRenderError) {
              // Compiled again for the next message: its template may be fixed before a retry.
              sources.forget(row);
              record({ id, result: 'template_error', error: err.message });
              continue;
            }
            // Its send or step is read again before the next attempt: deleting a relay clears it there.
            if (err instanceof PinnedRelayMissing) sources.forget(row);
            const failure: RelayFailure = err instanceof RelayRefusal
              ? err.failure
              : err instanceof RelaysDown || err instanceof PinnedRelayMissing
                ? { relayDown: true, outcome: 'retry', code: null, message: err.message }
                : classifyRelayError('smtp', err);
            const relayId = err instanceof RelayRefusal ? err.relayId : null;
            if (failure.outcome === 'bounce') {
              record({ id, result: 'bounce', userId: Number(row.user_id), emailKey: row.email_key, code: failure.code, error: failure.message });
            } else if (failure.outcome === 'policy') {
              record({ id, result: 'policy', code: failure.code, error: failure.message, relayId });
            } else if (failure.outcome === 'unconfirmed') {
              record({ id, result: 'unconfirmed', error: failure.message, relayId, linkVersion: bySource.get(sourceKey(row) ?? '')?.linkVersion ?? null });
            } else if (failure.outcome === 'failed') {
              record({ id, result: 'failed', error: failure.message });
            } else {
              record({ id, result: 'retry', attempts: Number(row.attempts), code: failure.code, error: failure.message });
            }
          }
        }
        await writer.flush();
      } finally {
        permits.release();
      }
    };
    await Promise.all(Array.from({ length: Math.min(transport.concurrency, rows.length) }, slot));
    await writer.flush();
  }

  async function drain(): Promise<void> {
    for (;;) {
      const rows = await claim();
      if (rows.length) await sendBatch(rows);
      if (rows.length < batchSize) await completeChecked();
      if (!rows.length) return;
    }
  }

  async function lane(): Promise<void> {
    while (running) {
      try {
        const rows = await claim();
        if (rows.length) await sendBatch(rows);
        if (rows.length < batchSize) await completeChecked();
        if (!rows.length) await sleeper.sleep(pollMs);
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
      await writer.between(() => renewLeases().catch((err) => logger.error({ err }, 'renewing leases failed')));
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
      await writer.flush();
      await completeChecked();
    },
    start() {
      if (running) return;
      running = true;
      loops = [ticker(), heartbeat(), ...Array.from({ length: lanes }, lane)];
      logger.info({ owner, lanes, batchSize }, 'sending worker started');
    },
    async stop() {
      if (!running) {
        relays.close();
        return;
      }
      running = false;
      sleeper.wakeAll();
      await Promise.all(loops);
      await writer.flush();
      await completeChecked();
      relays.close();
      logger.info({ owner }, 'sending worker stopped');
    },
  };
}
