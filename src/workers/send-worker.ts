import { createWorkerLedger, WorkerHooks } from '../services';
import type { Claimed, SendLedgerDeps, SendLedgerOptions } from '../services/delivery/sending';
import { MESSAGE_KIND } from '../lib/constants';
import { Sleeper } from './sleeper';

/** Kinds claimed ahead of campaign mail (MESSAGE_PRIORITY). */
const OVERTAKING_KINDS: ReadonlySet<number> = new Set([MESSAGE_KIND.system, MESSAGE_KIND.transactional]);

export type { WorkerHooks };

/** What a worker's ledger is built from (services' createWorkerLedger builds it). */
export interface WorkerDeps extends Omit<SendLedgerDeps, 'feeds' | 'hooks' | 'sleep'> {
  hooks?: WorkerHooks;
}

export interface WorkerOptions extends SendLedgerOptions {
  /** Ledger rows per claim. */
  batchSize?: number;
  /** Batches in flight at once, so one batch's tail overlaps the next one's head. */
  lanes?: number;
  /** Idle wait between looks for work. */
  pollMs?: number;
  /** How often the background loop looks at automations (enrolment compares whole targets). */
  automationsEveryMs?: number;
  /** Idle wait of the urgent lane, which claims only mail that overtakes campaigns (transactional, system). */
  urgentPollMs?: number;
  /** Rows per claim of the urgent lane. */
  urgentBatchSize?: number;
}

export interface SendingWorker {
  readonly owner: string;
  /** Starts due sends and automation steps, then sends every message due now, then returns (tests). */
  runOnce(): Promise<void>;
  /** Keeps working in the background until stop(). */
  start(): void;
  /** Ends the urgent lane's idle wait: this process just queued mail that overtakes campaigns. */
  wakeUrgent(): void;
  /** Finishes the messages in hand, records them and returns; leaves no timer running. */
  stop(): Promise<void>;
}

/**
 * The sending loop: lanes claim batches and send them, a heartbeat renews the leases of the
 * rows in hand, a ticker asks for due work. What is sent, how, and what is written is the
 * ledger's (services/delivery/sending); this file only keeps it turning.
 */
export function createSendingWorker(deps: WorkerDeps, options: WorkerOptions = {}): SendingWorker {
  const { logger } = deps;
  const batchSize = options.batchSize ?? 200;
  const lanes = options.lanes ?? 2;
  const pollMs = options.pollMs ?? 1000;
  const urgentPollMs = options.urgentPollMs ?? 100;
  const urgentBatchSize = options.urgentBatchSize ?? 50;
  // Rate-limit waits sleep here too, so stopping the worker ends them.
  const sleeper = new Sleeper();
  // The urgent lane's own idle wait, so waking it for one receipt does not stir the bulk lanes.
  const urgentSleeper = new Sleeper();
  const ledger = createWorkerLedger({ ...deps, sleep: (ms) => sleeper.sleep(ms) }, options);
  let running = false;
  let loops: Promise<void>[] = [];

  /** One claimed message: it goes or not, and whatever happened is recorded. */
  async function sendOne(claimed: Claimed): Promise<void> {
    const verdict = ledger.decide(claimed);
    const outcome = verdict.verdict === 'go' ? await ledger.send(claimed) : verdict.outcome;
    if (outcome) ledger.record(outcome);
  }

  async function sendBatch(claims: Claimed[], urgent = false): Promise<void> {
    let next = 0;
    // A slot sends one message at a time: the start of its next message is written together
    // with the outcome of its last one, and nothing goes out before that write is durable.
    const slot = async (): Promise<void> => {
      await ledger.permits.acquire(urgent);
      try {
        while (next < claims.length) await sendOne(claims[next++]);
        await ledger.flush();
      } finally {
        ledger.permits.release();
      }
    };
    await Promise.all(Array.from({ length: Math.min(ledger.concurrency, claims.length) }, slot));
    await ledger.flush();
  }

  /**
   * Claims a batch and sends it; a short claim (the queue is empty for now) completes what this
   * worker finished. A claim that holds mail that overtakes campaigns and campaign mail sends the
   * first part before starting the second, so MAIL_RATE's slots go to it first.
   */
  async function turn(): Promise<number> {
    const rows = await ledger.claim(batchSize);
    if (rows.length) {
      const claims = await ledger.prepare(rows);
      const first = claims.filter((c) => OVERTAKING_KINDS.has(c.row.kind));
      const rest = claims.filter((c) => !OVERTAKING_KINDS.has(c.row.kind));
      if (first.length) await sendBatch(first);
      if (rest.length) await sendBatch(rest);
    }
    if (rows.length < batchSize) await ledger.completeSends();
    return rows.length;
  }

  async function lane(): Promise<void> {
    while (running) {
      try {
        if (!(await turn())) await sleeper.sleep(pollMs);
      } catch (err) {
        logger.error({ err }, 'sending failed; trying again shortly');
        await sleeper.sleep(pollMs);
      }
    }
  }

  /**
   * The urgent lane: while the other lanes work through a bulk send's batches, it claims only
   * transactional and system mail and sends it as a batch is sent (the transport's permits and
   * concurrency, each slot's outcome written before its next message; its slots wait for a
   * permit ahead of the bulk lanes'), so a crash leaves in doubt no more than the permits allow. `wakeUrgent()` ends its idle wait when this
   * process queues such mail; the poll stays for mail queued by other processes.
   */
  async function urgentLane(): Promise<void> {
    while (running) {
      try {
        const rows = await ledger.claim(urgentBatchSize, true);
        if (rows.length) await sendBatch(await ledger.prepare(rows), true);
        else await urgentSleeper.sleep(urgentPollMs);
      } catch (err) {
        logger.error({ err }, 'sending urgent mail failed; trying again shortly');
        await urgentSleeper.sleep(pollMs);
      }
    }
  }

  async function heartbeat(): Promise<void> {
    while (running) {
      await sleeper.sleep(Math.max(100, Math.floor(ledger.leaseMs / 3)));
      await ledger.renewLeases();
    }
  }

  async function ticker(): Promise<void> {
    while (running) {
      try {
        // New work wakes the lanes at once instead of after their idle wait.
        if ((await ledger.startDue(false)) > 0) sleeper.wakeAll();
      } catch (err) {
        logger.error({ err }, 'starting due sends failed');
      }
      if (running) await sleeper.sleep(pollMs);
    }
  }

  return {
    owner: ledger.owner,
    async runOnce() {
      await ledger.startDue(true);
      while (await turn());
      await ledger.flush();
      await ledger.completeSends();
    },
    wakeUrgent() {
      urgentSleeper.wakeAll();
    },
    start() {
      if (running) return;
      running = true;
      loops = [ticker(), heartbeat(), urgentLane(), ...Array.from({ length: lanes }, lane)];
      logger.info({ owner: ledger.owner, lanes, batchSize }, 'sending worker started');
    },
    async stop() {
      if (!running) {
        ledger.close();
        return;
      }
      running = false;
      sleeper.wakeAll();
      urgentSleeper.wakeAll();
      await Promise.all(loops);
      await ledger.flush();
      await ledger.completeSends();
      ledger.close();
      logger.info({ owner: ledger.owner }, 'sending worker stopped');
    },
  };
}
