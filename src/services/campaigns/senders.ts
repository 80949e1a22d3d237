import crypto from 'node:crypto';
import { insertId, nowValue } from '../../db/dialect';
import { emailKey } from '../../lib/email-key';
import { listPage, Paging } from '../../db/paging';
import { sha256 } from '../../lib/crypto';
import { ConflictError, FieldErrors, NotFoundError, ServiceUnavailableError } from '../../lib/errors';
import { plainDateTime, timestamp } from '../../lib/time';
import { messages, throwIfAny } from '../../lib/validation';
import { queuedVerification } from '../delivery/notices';
import { deliverNow, queueSystemMail } from '../delivery/notices';
import type { Ctx, ServiceDeps } from '../context';
import type { EventsService } from '../delivery/notices';
import { domainStatusColumn } from '../delivery/relays';
import type { SenderDomainStatus } from '../../lib/constants';
import { audited } from '../shared/audit-writer';

export interface SenderInput {
  from_name: string;
  from_email: string;
  reply_to_email: string;
  country_id: number;
  state_id: number | null;
  city_id: number | null;
  zip_code: string | null;
  company_address: string;
  company_address2: string | null;
  nickname: string;
}

export interface SenderRecord extends SenderInput {
  id: number;
  user_id: number;
  is_verified: number;
  utr: string;
  send_at: string | null;
  created_at: string | null;
  updated_at: string | null;
  deleted_at: string | null;
  /** Whether mail from its address is signed by a sending domain of the account (verified), was (failing) or not. */
  domain_status: SenderDomainStatus;
}

const nullableId = (value: unknown) => (value === null || value === undefined ? null : Number(value));
const textOrEmpty = (value: unknown) => (value === null || value === undefined ? '' : String(value));

/** `row.domain_status` comes from domainStatusColumn (null: unauthenticated). */
export function senderRecord(row: Record<string, unknown>): SenderRecord {
  return {
    id: Number(row.id),
    user_id: Number(row.user_id),
    from_name: String(row.from_name),
    from_email: String(row.from_email),
    reply_to_email: String(row.reply_to_email),
    country_id: Number(row.country_id),
    state_id: nullableId(row.state_id),
    city_id: nullableId(row.city_id),
    // The reference types these as strings (it writes "or null" where null is meant): not given is ''.
    zip_code: textOrEmpty(row.zip_code),
    company_address: String(row.company_address),
    company_address2: textOrEmpty(row.company_address2),
    nickname: String(row.nickname),
    is_verified: Number(row.is_verified),
    utr: String(row.utr),
    send_at: plainDateTime(row.send_at),
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
    deleted_at: timestamp(row.deleted_at),
    domain_status: (row.domain_status ? String(row.domain_status) : 'unauthenticated') as SenderDomainStatus,
  };
}

/** The sender's `utr`: a short random identifier (the reference shows no format for it). */
function senderUtr(): string {
  return crypto.randomBytes(8).toString('hex');
}

interface SendersDeps extends ServiceDeps {
  /** Tells the notification recipients when a sender is verified. */
  events: Pick<EventsService, 'senderVerified'>;
}

export function createSendersService({ db, config, logger, mail, secret, events }: SendersDeps) {
  const live = (ctx: Ctx) => db('senders').where({ user_id: ctx.userId }).whereNull('deleted_at');

  /** Country, state and city must exist and belong together. */
  async function checkGeography(input: SenderInput): Promise<void> {
    const errors: FieldErrors = {};
    if (!(await db('countries').where({ id: input.country_id }).first('id'))) {
      errors.country_id = [messages.selected('country_id')];
    }
    if (input.state_id !== null && !(await db('states').where({ id: input.state_id, country_id: input.country_id }).first('id'))) {
      errors.state_id = [messages.selected('state_id')];
    }
    if (input.city_id !== null) {
      const city = db('cities')
        .join('states', 'states.id', 'cities.state_id')
        .where({ 'cities.id': input.city_id, 'states.country_id': input.country_id });
      if (input.state_id !== null) city.where('cities.state_id', input.state_id);
      if (!(await city.first('cities.id'))) errors.city_id = [messages.selected('city_id')];
    }
    throwIfAny(errors);
  }

  /**
   * The one place that sends a verification mail. It is written to the send ledger without its
   * link, as the sender's latest verification mail (which voids any earlier link and any earlier
   * mail still waiting), then delivered at once; the link's single-use token is made as it goes
   * out and only its sha256 is stored. A failed attempt stays in the ledger for the worker.
   */
  async function sendVerification(ctx: Ctx, id: number, sender: Pick<SenderInput, 'from_name' | 'from_email'>): Promise<void> {
    const messageId = await db.transaction(async (trx) => {
      const queued = await queueSystemMail(trx, ctx.userId, queuedVerification(config, { ...sender, id }));
      await trx('senders').where({ id }).update({ verify_token_hash: null, verify_message_id: queued });
      return queued;
    });
    const outcome = await deliverNow({ db, mail, logger, secret, baseUrl: config.baseUrl, bounceDomain: config.bounceDomain, smtpUrl: config.smtpUrl }, messageId);
    if (outcome === 'retry' || outcome === 'bounce') {
      throw new ServiceUnavailableError(
        'The sender is saved, but its verification mail could not be sent; try /sender/resend-mail again in a moment.',
      );
    }
    await db('senders').where({ id }).update({ send_at: nowValue() });
  }

  async function get(ctx: Ctx, id: number): Promise<SenderRecord> {
    const row = await live(ctx).where({ id }).first('senders.*', domainStatusColumn(db, 'senders'));
    if (!row) throw new NotFoundError();
    return senderRecord(row);
  }

  return {
    get,

    async list(ctx: Ctx, paging?: Paging) {
      return listPage(live(ctx).select('senders.*', domainStatusColumn(db, 'senders')).orderBy('id', 'desc'), paging, senderRecord);
    },

    /** The live sender with this id in this account, or undefined (for references from sends). */
    async find(ctx: Ctx, id: number): Promise<SenderRecord | undefined> {
      const row = await live(ctx).where({ id }).first('senders.*', domainStatusColumn(db, 'senders'));
      return row ? senderRecord(row) : undefined;
    },

    /**
     * The sender's postal address on one line (street, zip and city, state, country): what
     * sends copy as `sender_address` for the ((sender_address)) placeholder in footers.
     */
    async postalAddress(sender: SenderRecord): Promise<string> {
      const [country, state, city] = await Promise.all([
        db('countries').where({ id: sender.country_id }).first('name'),
        sender.state_id === null ? undefined : db('states').where({ id: sender.state_id }).first('name'),
        sender.city_id === null ? undefined : db('cities').where({ id: sender.city_id }).first('name'),
      ]);
      const cityLine = [sender.zip_code, city?.name].filter(Boolean).join(' ');
      return [sender.company_address, sender.company_address2, cityLine, state?.name, country?.name].filter(Boolean).join(', ');
    },

    /** Saves an unverified sender and mails its verification link. */
    async add(ctx: Ctx, input: SenderInput): Promise<number> {
      await checkGeography(input);
      const now = nowValue();
      const id = await audited(db, ctx, (trx) => insertId(trx, 'senders', {
        ...input,
        user_id: ctx.userId,
        is_verified: 0,
        utr: senderUtr(),
        created_at: now,
        updated_at: now,
      }), (created) => ({ action: 'sender.created', recordType: 'sender', recordId: created, summary: `${input.from_name} <${input.from_email}>` }));
      await sendVerification(ctx, id, input);
      return id;
    },

    /** Replaces the sender's fields; a new from_email makes it unverified and mails a new link. */
    async update(ctx: Ctx, id: number, input: SenderInput): Promise<void> {
      const current = await live(ctx).where({ id }).first('from_email');
      if (!current) throw new NotFoundError();
      await checkGeography(input);
      const emailChanged = emailKey(current.from_email) !== emailKey(input.from_email);
      const changes = emailChanged ? { ...input, is_verified: 0, verify_token_hash: null } : input;
      await audited(db, ctx, async (trx) => {
        const changed = await trx('senders').where({ user_id: ctx.userId, id }).whereNull('deleted_at').update({ ...changes, updated_at: nowValue() });
        if (!changed) throw new NotFoundError();
      }, () => ({ action: 'sender.updated', recordType: 'sender', recordId: id, summary: `${input.from_name} <${input.from_email}>` }));
      if (emailChanged) await sendVerification(ctx, id, input);
    },

    /** Soft-deletes the sender; its pending verification link stops working. */
    async remove(ctx: Ctx, id: number): Promise<void> {
      const now = nowValue();
      await audited(db, ctx, async (trx) => {
        const changed = await trx('senders').where({ user_id: ctx.userId, id }).whereNull('deleted_at').update({ deleted_at: now, updated_at: now, verify_token_hash: null });
        if (!changed) throw new NotFoundError();
      }, () => ({ action: 'sender.deleted', recordType: 'sender', recordId: id }));
    },

    async resendMail(ctx: Ctx, id: number): Promise<void> {
      const sender = await get(ctx, id);
      if (sender.is_verified) throw new ConflictError('This sender is already verified; there is no mail to resend.');
      await sendVerification(ctx, id, sender);
    },

    /** Follows a verification link: verifies the sender once; an unknown or used token changes nothing. */
    async verify(token: string): Promise<SenderRecord | undefined> {
      if (!token || token.length > 200) return undefined;
      const hash = sha256(token);
      const row = await db('senders').where({ verify_token_hash: hash }).whereNull('deleted_at').first('senders.*', domainStatusColumn(db, 'senders'));
      if (!row) return undefined;
      // The hash in the WHERE makes the token single-use even when two requests race.
      const changed = await db('senders')
        .where({ id: row.id, verify_token_hash: hash })
        .update({ is_verified: 1, verify_token_hash: null, updated_at: nowValue() });
      if (!changed) return undefined;
      await events.senderVerified(Number(row.user_id), { from_name: row.from_name, from_email: row.from_email });
      return senderRecord({ ...row, is_verified: 1 });
    },
  };
}

export type SendersService = ReturnType<typeof createSendersService>;
