import type { Knex } from 'knex';
import type { Config } from '../../../config';
import { reserveRelaySlot } from '../../../db/rate-limits';
import { parseJson } from '../../../db/dialect';
import { RELAY_LIMITS } from '../../../lib/constants';
import type { OutgoingMessage } from '../../../mail/outgoing-message';
import { classifyRelayError, createRelayTransport, fromDomain, RelayFailure, RelayTransport } from '../../../mail/relay-transports';
import type { MailTransport } from '../../../mail/transport';
import { markRelayDown, markRelayUp, RelayRow, relaySettings, servesDomain } from './relays';

/** Where a message went: the relay that accepted it (null: the instance's SMTP_URL) and the provider's id for it. */
export interface Routed {
  relayId: number | null;
  providerMessageId: string | null;
}

/**
 * A relay refused the message itself (the relay is fine), or went silent after taking all of it
 * (outcome `unconfirmed`, the relay marked down): nothing is handed to another relay.
 */
export class RelayRefusal extends Error {
  constructor(readonly failure: RelayFailure, readonly relayId: number) {
    super(failure.message);
  }
}

/** Every relay serving the message's domain is down: the message waits for one to come back. */
export class RelaysDown extends Error {
  constructor(domain: string, last: RelayFailure | undefined) {
    super(`every relay serving ${domain} is down${last ? ` (last error: ${last.message})` : ''}`.slice(0, 480));
  }
}

/**
 * The send or step names a relay the account does not have, even read afresh (it was deleted
 * since the message's content was loaded): the message waits rather than leave another way.
 */
export class PinnedRelayMissing extends Error {
  constructor(readonly relayId: number) {
    super(`the relay this message is to go through (id ${relayId}) is not one of the account's relays any more; the message waits and is tried again with the send's current choice`);
  }
}

/**
 * What a hand-over threw (RelayRouter.send, or the instance's transport), in the mail layer's
 * words, with the relay that refused it: read here once, where those errors are made.
 */
export function handOverFailure(err: unknown): { failure: RelayFailure; relayId: number | null } {
  if (err instanceof RelayRefusal) return { failure: err.failure, relayId: err.relayId };
  if (err instanceof RelaysDown || err instanceof PinnedRelayMissing) return { failure: { relayDown: true, outcome: 'retry', code: null, message: err.message }, relayId: null };
  return { failure: classifyRelayError('smtp', err), relayId: null };
}

interface Cached {
  at: number;
  rows: RelayRow[];
}

/**
 * Chooses and calls the way out for each message of an account: its highest-priority healthy
 * relay serving the From domain (the send's or step's own relay first), else the instance's
 * transport when none serves the domain. A relay that fails as a relay (unreachable, timed
 * out, 421, API 5xx/429/401) is marked down in the database for every worker and the message
 * goes on to the next relay at once, unless the relay failed after the whole message was handed
 * to it (it may have accepted it: the message fails `unconfirmed`); a refusal of the message
 * itself is never handed to another relay, and a message a relay accepted is never sent again.
 * An account's relays are read at most every RELAY_LIMITS.cacheMs, again after any of them
 * failed, and again when a message names a relay not among those read (one made since): a
 * pinned message never leaves through another relay because the list was old.
 */
export class RelayRouter {
  private readonly accounts = new Map<number, Cached>();
  private readonly transports = new Map<number, { version: string; transport: RelayTransport }>();

  constructor(
    private readonly db: Knex,
    private readonly appSecret: string,
    private readonly config: Pick<Config, 'relayAllowPrivate' | 'dkim'>,
    private readonly instance: MailTransport,
    private readonly sleep: (ms: number) => Promise<void>,
    /** The worker's clock: how old a read of the relays is, and whether a relay is down now. */
    private readonly now: () => Date = () => new Date(),
  ) {}

  private async relaysOf(userId: number, pinned: number | null | undefined): Promise<RelayRow[]> {
    const cached = this.accounts.get(userId);
    const known = (rows: RelayRow[]) => !pinned || rows.some((r) => r.id === pinned);
    if (cached && this.now().getTime() - cached.at < RELAY_LIMITS.cacheMs && known(cached.rows)) return cached.rows;
    const rows = (await this.db('relays').where({ user_id: userId }).orderBy('priority', 'desc').orderBy('id')) as RelayRow[];
    this.accounts.set(userId, { at: this.now().getTime(), rows });
    if (!known(rows)) throw new PinnedRelayMissing(Number(pinned));
    return rows;
  }

  private transportOf(row: RelayRow): RelayTransport {
    const version = String(row.updated_at);
    const held = this.transports.get(row.id);
    if (held && held.version === version) return held.transport;
    held?.transport.close();
    const transport = createRelayTransport(relaySettings(row, this.appSecret), { allowPrivate: this.config.relayAllowPrivate, dkim: this.config.dkim });
    this.transports.set(row.id, { version, transport });
    return transport;
  }

  /** Sends through the chosen relay, failing over on relay failures; throws RelayRefusal, RelaysDown, PinnedRelayMissing or the instance transport's error. */
  async send(userId: number, pinned: number | null | undefined, message: OutgoingMessage): Promise<Routed> {
    const domain = fromDomain(message.from);
    const rows = await this.relaysOf(userId, pinned);
    const serving = rows.filter((r) => r.id === pinned || servesDomain(parseJson<string[]>(r.domains, []), domain));
    if (!serving.length) {
      await this.instance.send(message);
      return { relayId: null, providerMessageId: null };
    }
    const ordered = pinned ? [...serving.filter((r) => r.id === pinned), ...serving.filter((r) => r.id !== pinned)] : serving;
    let last: RelayFailure | undefined;
    for (const relay of ordered) {
      if (relay.down_until && new Date(String(relay.down_until)).getTime() > this.now().getTime()) continue;
      const maxRate = Number(relay.max_rate);
      if (maxRate > 0) {
        const wait = await reserveRelaySlot(this.db, relay.id, 1000 / maxRate);
        if (wait > 0) await this.sleep(wait);
      }
      try {
        const result = await this.transportOf(relay).send(message);
        if (Number(relay.failures) > 0) {
          relay.failures = 0;
          await markRelayUp(this.db, relay.id);
        }
        return { relayId: relay.id, providerMessageId: result.providerMessageId };
      } catch (err) {
        const failure = classifyRelayError(relay.kind, err);
        if (!failure.relayDown) throw new RelayRefusal(failure, relay.id);
        last = failure;
        await markRelayDown(this.db, relay.id, failure.message, this.now());
        // Skipped by this worker's next messages at once; the stored backoff is read with the account's relays.
        relay.down_until = new Date(this.now().getTime() + RELAY_LIMITS.firstBackoffMs).toISOString();
        this.accounts.delete(userId);
        this.transports.get(relay.id)?.transport.close();
        this.transports.delete(relay.id);
        // It went silent after taking the whole message: it may have accepted it, so the message
        // goes nowhere else (the relay is down all the same).
        if (failure.outcome === 'unconfirmed') throw new RelayRefusal(failure, relay.id);
      }
    }
    throw new RelaysDown(domain, last);
  }

  close(): void {
    for (const { transport } of this.transports.values()) transport.close();
    this.transports.clear();
  }
}
