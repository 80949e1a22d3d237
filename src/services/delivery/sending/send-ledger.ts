import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Config } from '../../../config';
import { claimMessages } from '../../../db/locking';
import { MESSAGE_KIND, MESSAGE_PRIORITY, MESSAGE_STATE } from '../../../lib/constants';
import { randomToken } from '../../../lib/crypto';
import { createSigner } from '../../../lib/signed-token';
import { feedbackStamp } from '../../../mail/feedback-stamp';
import { TemplateRenderError } from '../../../mail/liquid';
import type { OutgoingMessage } from '../../../mail/outgoing-message';
import type { MailTransport } from '../../../mail/transport';
import {
  completeSends,
  decideDueAbTests,
  expandRunningSends,
  failedOutcome,
  LEDGER_COLUMNS,
  LedgerWriter,
  Permits,
  startDueSingleSends,
  suppressedRowIds,
  instanceBounceList,
  writeLedger,
  type LedgerRow,
  type Outcome,
  type PolicyPause,
  type StartHooks,
} from '../ledger';
import { MessageSources, sourceKey, type MessageSource } from '../messages';
import { VOID_SYSTEM_MAIL } from '../notices';
import { AccountRateLimiter, handOverFailure, PinnedRelayMissing, RelayRouter, type Routed } from '../relays';
import { decideClaim, type ClaimFacts, type Verdict } from './decide';
import { createMxLookup } from '../../../mail/domain-records';
import { createDomainClassifier, createProviderFiguresService, createProviderGuard, domainOf, isThrottling, pauseKey, PAUSED_RECHECK_MS, ProviderThrottles, createWarmups, nextDay, type Provider, type ProviderPause, type Warmup } from '../providers';

/** What the ledger tells the rest of the service about (events become notification mail). */
export interface SendHooks extends StartHooks {
  /** A send was paused for its policy refusals (in the ledger write's transaction, once per send). */
  sendPausedForPolicy?(pause: PolicyPause, trx: Knex.Transaction): Promise<void>;
  /** A send was paused for messages whose template did not render (in the ledger write's transaction, once per send). */
  sendPausedForTemplateErrors?(pause: PolicyPause, trx: Knex.Transaction): Promise<void>;
  /** The guard paused a sending domain's mail to a provider (in the pause's transaction, once per pause). */
  providerPaused?(pause: ProviderPause, trx: Knex.Transaction): Promise<void>;
}

/**
 * Something that writes due messages into the ledger: due single sends and A/B tests' winners
 * (built in), automation steps (the composition root adds them); journeys and transactional
 * mail come in the same way.
 */
export interface LedgerFeed {
  /**
   * Writes what is due at `now`; answers how many sends or steps began (new work wakes the
   * worker). `everything`: all of it now, not only what keeps the sending busy (runOnce).
   */
  startDue(now: Date, everything?: boolean): Promise<number>;
  /** Asked at most this often (by the wall clock) unless everything is asked for; unset: every time. */
  everyMs?: number;
  /** Work it began wakes the sending at once: the feeds after it wait for the next look (unless everything is asked for). */
  wakesAtOnce?: boolean;
}

/** A claimed row with what its batch loaded for it. */
export interface Claimed extends ClaimFacts {
  row: LedgerRow;
  person: Record<string, unknown>;
  /** What a campaign message is built from (its send's or step's content); none for system mail. */
  source?: MessageSource;
  /** The mailbox provider of its domain as known now (`other` until the domain resolves). */
  provider?: Provider;
  /** Its From domain's mail to that provider is paused by the guard: it stays queued. */
  paused?: boolean;
  /** Its From domain's warm-up schedule, when it has one. */
  warmup?: Warmup;
}

/**
 * One kind of ledger message: how it is built from its claimed row and which way it leaves. A
 * new kind (transactional mail, a journey's step) is one more entry in the ledger's table.
 */
export interface MessageKind {
  /** The message; undefined when it is void and must not be sent. Throws when it cannot be built. */
  build(claimed: Claimed): Promise<OutgoingMessage | undefined>;
  /** Hands the stamped message over; throws what the way out throws (see handOverFailure). */
  send(claimed: Claimed, message: OutgoingMessage): Promise<Routed>;
}

export interface SendLedgerDeps {
  db: Knex;
  config: Pick<Config, 'baseUrl' | 'mailRate' | 'bounceDomain' | 'smtpUrl' | 'sendMaxAttempts' | 'sendRetryMs' | 'relayAllowPrivate' | 'dkim'> & { domains?: Partial<Pick<Config['domains'], 'requireDomainAuth' | 'dnsServers'>>; deliverability?: Config['deliverability'] };
  logger: Logger;
  secret: string;
  /** The instance's own way out: system mail, and campaign mail of accounts without a relay for its domain. */
  transport: MailTransport;
  hooks?: SendHooks;
  /** Feeds beyond the built-in ones, asked after them. */
  feeds?: LedgerFeed[];
  /**
   * Kinds beyond the built-in ones, by MESSAGE_KIND (the composition root adds transactional
   * mail); a kind without its own `send` leaves the way campaign mail does (the account's relays).
   */
  kinds?: Record<number, Pick<MessageKind, 'build'> & Partial<Pick<MessageKind, 'send'>>>;
  /** The waits rate limits ask for (the worker's, so stopping it ends them). */
  sleep(ms: number): Promise<void>;
}

export interface SendLedgerOptions {
  /** How long a claimed row stays with this worker before others may take it. */
  leaseMs?: number;
  /** Attempts before a message that keeps failing with 4xx is given up (default: SEND_MAX_ATTEMPTS). */
  maxAttempts?: number;
  /** First retry delay; doubles with every attempt up to retryMaxMs (default: SEND_RETRY_SECONDS). */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** The clock (tests move it instead of waiting). */
  now?: () => Date;
  /** Addresses per batch of a running send's expansion (SEND_EXPAND_BATCH). */
  expandBatch?: number;
  /** Batches of queued messages the expansion keeps ahead of the sending (SEND_EXPAND_AHEAD). */
  expandAhead?: number;
}

/** The ledger as a sending worker sees it: everything but the loop. */
export interface SendLedger {
  /** This worker's name on the rows it leases. */
  readonly owner: string;
  /** How long a claimed row stays with this worker before others may take it. */
  readonly leaseMs: number;
  /** One per message in flight, shared by all batches: bounds what a crash can send twice. */
  readonly permits: Permits;
  /** Messages the way out takes at once. */
  readonly concurrency: number;
  /** Asks the feeds for due work (`everything`: the throttled ones too); answers how much began. */
  startDue(everything: boolean): Promise<number>;
  /** Leases up to `limit` rows due now to this worker; `urgent`: only kinds that overtake campaigns (system, transactional). */
  claim(limit: number, urgent?: boolean): Promise<LedgerRow[]>;
  /** Loads what a claimed batch needs, a few queries per batch: sources, people, who must not be written to. */
  prepare(rows: LedgerRow[]): Promise<Claimed[]>;
  /** Whether a claimed message goes now (pure: see decideClaim). */
  decide(claimed: Claimed): Verdict;
  /**
   * Builds the message, marks its start durable, hands it over and answers its outcome;
   * undefined when the row is no longer this worker's (it must not be recorded either).
   */
  send(claimed: Claimed): Promise<Outcome | undefined>;
  /** Hands in an outcome; it is written with the next group commit. */
  record(outcome: Outcome): void;
  /** Resolves once every outcome handed in is written. */
  flush(): Promise<void>;
  /** Extends the lease of the rows in hand (between two writes), so only a dead worker's rows are taken over. */
  renewLeases(): Promise<void>;
  /** Completes the sends whose last outcomes this worker wrote. */
  completeSends(): Promise<void>;
  /** Closes the relays' connections. */
  close(): void;
}

const NO_ROUTE: Routed = { relayId: null, providerMessageId: null };
/** A slowed provider's slot further away than this is waited for queued, not by a sleeping worker. */
const SLOT_WAIT_MAX_MS = 2000;
/** How long a started send waits for its recipient domains' lookups before its messages go. */
const CLASSIFY_WAIT_MS = 5000;

export function createSendLedger(deps: SendLedgerDeps, options: SendLedgerOptions = {}): SendLedger {
  const { db, logger, transport, hooks = {} } = deps;
  const sleep = (ms: number) => deps.sleep(ms);
  const leaseMs = options.leaseMs ?? 5 * 60_000;
  const maxAttempts = options.maxAttempts ?? deps.config.sendMaxAttempts;
  const retryBaseMs = options.retryBaseMs ?? deps.config.sendRetryMs;
  const retryMaxMs = options.retryMaxMs ?? 3_600_000;
  const now = options.now ?? (() => new Date());
  const owner = `${process.pid}-${randomToken(6)}`;
  const requireDomainAuth = deps.config.domains?.requireDomainAuth;

  const limiter = new AccountRateLimiter(db, deps.config.mailRate, sleep);
  const sources = new MessageSources(db, createSigner(deps.secret), deps.config.baseUrl, undefined, deps.secret);
  const stamp = feedbackStamp(deps.secret, deps.config.bounceDomain, deps.config.smtpUrl);
  // Accounts' own relays; mail of accounts without one serving its From domain (and system mail) leaves through `transport`.
  const relays = new RelayRouter(db, deps.secret, deps.config, transport, sleep, now);
  const instanceBounces = deps.config.deliverability?.instanceBounceList ? instanceBounceList(deps.secret) : undefined;

  const campaign: MessageKind = {
    async build({ row, source, person }) {
      if (!source) throw new Error('the message has no source');
      return sources.build(row, source, person, true);
    },
    send: ({ row, source }, message) => relays.send(Number(row.user_id), source?.relayId, message),
  };
  const system: MessageKind = {
    build: ({ row }) => sources.buildSystem(row),
    send: async (_, message) => (await transport.send(message), NO_ROUTE),
  };
  const kinds = new Map<number, MessageKind>([
    [MESSAGE_KIND.single, campaign],
    [MESSAGE_KIND.automation, campaign],
    [MESSAGE_KIND.system, system],
  ]);
  for (const [kind, extra] of Object.entries(deps.kinds ?? {})) {
    kinds.set(Number(kind), { build: extra.build, send: extra.send ?? ((claimed, message) => relays.send(Number(claimed.row.user_id), null, message)) });
  }

  // Recipient domains are classified by provider: a send's when it starts, a claimed batch's new
  // ones before it is sent, and those checked more than a day ago now and then. The sending
  // waits for DNS a few seconds at most; past that the lookups go on in the background.
  const classifier = createDomainClassifier({ db, lookupMx: createMxLookup(deps.config.domains?.dnsServers ?? []), logger, now });
  const briefly = async (lookups: Promise<void>) => {
    const done = lookups.catch((err) => logger.warn({ err }, 'classifying recipient domains failed'));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([done, new Promise<void>((resolve) => (timer = setTimeout(resolve, CLASSIFY_WAIT_MS).unref()))]);
    clearTimeout(timer);
  };
  const classifyStarted = (sendId: number) => briefly(classifier.classifySend(sendId));

  const throttles = new ProviderThrottles(db, retryBaseMs);
  const warmups = createWarmups(db);
  const guardSettings = deps.config.deliverability;
  const guard = guardSettings ? createProviderGuard({ db, figures: createProviderFiguresService({ db, classifier }), settings: guardSettings }) : undefined;

  const expansion = { batch: options.expandBatch ?? 5000, ahead: options.expandAhead ?? 3, onCompleted: hooks.singleSendCompleted };
  const feeds: LedgerFeed[] = [
    // A started send's first batch is queued: its first message need not wait for the other feeds.
    {
      startDue: async (at) => {
        const started = await startDueSingleSends(db, at, hooks, { requireDomainAuth, firstBatch: Math.min(1000, expansion.batch) });
        for (const send of started) await classifyStarted(send.id);
        return started.length;
      },
      wakesAtOnce: true,
    },
    // The running sends' audiences, written a few batches ahead of the sending.
    { startDue: (at, everything) => expandRunningSends(db, at, { ...expansion, everything }) },
    { startDue: async () => (await classifier.refreshStale(), 0), everyMs: 10 * 60_000 },
    ...(guard ? [{ startDue: async (at: Date) => (await guard.check(at, hooks.providerPaused), 0), everyMs: 5 * 60_000 }] : []),
    { startDue: (at) => decideDueAbTests(db, at) },
    ...(deps.feeds ?? []),
  ];
  const askedAt = new Map<LedgerFeed, number>();

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
        instanceBounces,
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

  async function renew(): Promise<void> {
    const ids = [...inHand];
    const leaseUntil = new Date(now().getTime() + leaseMs).toISOString();
    for (let i = 0; i < ids.length; i += 500) {
      await db('send_messages')
        .whereIn('id', ids.slice(i, i + 500))
        .where({ state: MESSAGE_STATE.sending, lease_owner: owner })
        .update({ available_at: leaseUntil });
    }
  }

  return {
    owner,
    leaseMs,
    // One permit per message in flight, shared by the lanes: however many batches overlap, no
    // more than the transport's concurrency are being sent and not yet recorded at any moment.
    permits: new Permits(transport.concurrency),
    concurrency: transport.concurrency,

    async startDue(everything) {
      let started = 0;
      for (const feed of feeds) {
        if (feed.everyMs !== undefined) {
          if (!everything && Date.now() - (askedAt.get(feed) ?? 0) < feed.everyMs) continue;
          askedAt.set(feed, Date.now());
        }
        const began = await feed.startDue(now(), everything);
        started += began;
        if (began > 0 && feed.wakesAtOnce && !everything) break;
      }
      return started;
    },

    async claim(limit, urgent = false) {
      const at = now();
      const rows = await claimMessages(db, {
        limit,
        now: at.toISOString(),
        leaseUntil: new Date(at.getTime() + leaseMs).toISOString(),
        owner,
        columns: LEDGER_COLUMNS,
        ...(urgent ? { priorityBelow: MESSAGE_PRIORITY.campaign } : {}),
      });
      for (const row of rows) inHand.add(Number(row.id));
      return rows as unknown as LedgerRow[];
    },

    async prepare(rows) {
      const { sources: bySource, people } = await sources.prepare(rows);
      const sourceOf = (row: LedgerRow) => {
        const key = sourceKey(row);
        return key ? bySource.get(key) : undefined;
      };
      const suppressed = await suppressedRowIds(db, rows, (row) => sourceOf(row)?.groupId ?? null, instanceBounces && { list: instanceBounces, now: now() });
      // A batch written after its send started (the expansion goes on while it sends) may hold
      // domains not seen yet: they are looked up before its messages go, so a provider's
      // deferrals are known as its own from the first message.
      const domains = [...new Set(rows.map((row) => domainOf(row.email_key)))];
      const providers = await classifier.providersLookedUp(domains, briefly);
      await throttles.refresh();
      const userIds = [...new Set(rows.map((row) => Number(row.user_id)))];
      const paused = guard ? await guard.pausedKeys(userIds) : new Set<string>();
      const warming = await warmups.of(userIds);
      return rows.map((row) => {
        const person = people(row);
        const source = sourceOf(row);
        const provider = providers.get(domainOf(row.email_key)) ?? 'other';
        const from = source?.from.address;
        const isPaused = !!from && paused.size > 0 && paused.has(pauseKey(Number(row.user_id), domainOf(from), provider));
        const warmup = from ? warming.get(`${Number(row.user_id)}|${domainOf(from).toLowerCase()}`) : undefined;
        // A transactional message goes to its address whether or not a contact of it remains.
        const gone = !!person.deleted_at && row.kind !== MESSAGE_KIND.transactional;
        return { row, person, source, provider, paused: isPaused, warmup, unmailable: suppressed.has(Number(row.id)) || gone, unmailableReason: suppressed.get(Number(row.id)) };
      });
    },

    decide(claimed) {
      const verdict = decideClaim(claimed, maxAttempts);
      if (verdict.verdict !== 'go' || !claimed.provider) return verdict;
      // Paused by the guard: it stays queued and is looked at again later.
      if (claimed.paused) return { verdict: 'wait', outcome: { id: Number(claimed.row.id), result: 'held', until: new Date(now().getTime() + PAUSED_RECHECK_MS) } };
      // A provider that deferred for the sender's volume waits: its messages are not attempted meanwhile.
      const until = throttles.heldUntil(claimed.provider, now());
      return until ? { verdict: 'wait', outcome: { id: Number(claimed.row.id), result: 'held', until } } : verdict;
    },

    async send(claimed) {
      const { row } = claimed;
      // `other` gathers unrelated domains: one of them deferring slows no one else.
      const provider = claimed.provider && claimed.provider !== 'other' ? claimed.provider : undefined;
      const id = Number(row.id);
      const kind = kinds.get(row.kind) ?? campaign;
      try {
        const message = await kind.build(claimed);
        if (!message) return { id, result: 'suppressed', error: VOID_SYSTEM_MAIL };
        if (provider) {
          // A slowed provider's next slot: a short wait is waited, a long one is waited queued.
          const wait = await throttles.slot(provider, now());
          if (wait > SLOT_WAIT_MAX_MS) return { id, result: 'held', until: new Date(now().getTime() + wait) };
          if (wait > 0) await sleep(wait);
        }
        // Past today's warm-up cap for its provider: queued for tomorrow, not attempted.
        if (claimed.warmup && claimed.provider && !(await warmups.take(claimed.warmup, claimed.provider, now()))) return { id, result: 'held', until: nextDay(now()) };
        await limiter.take(Number(row.user_id));
        // Nothing goes out before its start is durable: a crash then leaves a trace on it.
        if (!(await writer.start(id))) {
          inHand.delete(id);
          return undefined;
        }
        const routed = await kind.send(claimed, stamp(message, id));
        // It went out: whatever happens to the bookkeeping, it is recorded as sent.
        if (provider) await throttles.delivered(provider, now()).catch((err) => logger.warn({ err, provider }, 'recording a provider\'s delivery failed'));
        return { id, result: 'sent', ...routed, linkVersion: claimed.source?.linkVersion ?? null, ...(message.templateErrors ? { templateErrors: true } : {}) };
      } catch (err) {
        // Out of time while the machine was busy: the template is not to blame, a later try may render it.
        if (err instanceof TemplateRenderError && err.busy) return { id, result: 'retry', attempts: Number(row.attempts), code: null, error: err.message };
        if (err instanceof TemplateRenderError) {
          // Compiled again for the next message: its template may be fixed before a retry.
          sources.forget(row);
          return { id, result: 'template_error', error: err.message };
        }
        // Its send or step is read again before the next attempt: deleting a relay clears it there.
        if (err instanceof PinnedRelayMissing) sources.forget(row);
        const { failure, relayId } = handOverFailure(err);
        const outcome = failedOutcome(row, failure, relayId);
        if (provider && outcome.result === 'retry' && isThrottling(outcome.code, outcome.error)) {
          const code = /\b4\.\d{1,3}\.\d{1,3}\b/.exec(outcome.error)?.[0] ?? String(outcome.code ?? '');
          const until = await throttles.deferred(provider, code, outcome.error, now()).catch((err) => void logger.warn({ err, provider }, 'recording a provider\'s deferral failed'));
          if (until) return { id, result: 'throttled', until, code: outcome.code, error: outcome.error };
        }
        // A throttling answer closes the connection: the messages in flight on it fail without an
        // answer of their own, and wait with the provider's as if deferred, not as an attempt.
        const held = provider && outcome.result === 'retry' && outcome.code === null ? throttles.heldUntil(provider, now()) : undefined;
        if (held) return { id, result: 'held', until: held };
        return outcome.result === 'unconfirmed' ? { ...outcome, linkVersion: claimed.source?.linkVersion ?? null } : outcome;
      }
    },

    record(outcome) {
      inHand.delete(outcome.id);
      writer.record(outcome);
    },

    flush: () => writer.flush(),

    // In turn with the outcome writes, so the two never wait on each other's rows.
    renewLeases: () => writer.between(() => renew().catch((err) => logger.error({ err }, 'renewing leases failed'))),

    async completeSends() {
      if (!unchecked.size) return;
      const sendIds = [...unchecked].sort((a, b) => a - b);
      unchecked.clear();
      try {
        await completeSends(db, sendIds, now(), hooks.singleSendCompleted);
      } catch (err) {
        for (const id of sendIds) unchecked.add(id);
        logger.error({ err }, 'completing sends failed');
      }
    },

    close: () => relays.close(),
  };
}
