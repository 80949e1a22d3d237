import { recordAudit } from '../shared/audit-writer';
import crypto from 'node:crypto';
import { insertId, nowValue, parseJson } from '../../db/dialect';
import { listPage, Paging } from '../../db/paging';
import { HOOK_DELIVERY, HOOK_DELIVERY_STATE, HookEventType } from '../../lib/constants';
import { sealSecret } from '../../lib/crypto';
import { ConflictError, NotFoundError, ValidationError } from '../../lib/errors';
import { refusedHost } from '../../lib/public-address';
import { timestamp } from '../../lib/time';
import type { Ctx, ServiceDeps } from '../context';

/** The purpose the signing secrets are sealed under (src/lib/crypto.ts). */
export const HOOK_SECRET_PURPOSE = 'outgoing-webhook-secret';

export interface WebhookInput {
  url: string;
  events: string[];
  description: string;
}

export interface WebhookRecord {
  id: number;
  user_id: number;
  url: string;
  description: string;
  events: HookEventType[];
  created_at: string | null;
  updated_at: string | null;
  /** Only in the answer of save, and of update with rotate_secret: never shown again. */
  secret?: string;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';
const STATUS_OF: Record<number, DeliveryStatus> = { 0: 'pending', 1: 'delivered', 2: 'failed' };

export interface DeliveryRecord {
  id: number;
  webhook_id: number;
  event_id: string;
  type: string;
  status: DeliveryStatus;
  attempts: number;
  response_code: number | null;
  error: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
  created_at: string | null;
  updated_at: string | null;
  data: unknown;
}

export function webhookRecord(row: Record<string, unknown>): WebhookRecord {
  return {
    id: Number(row.id),
    user_id: Number(row.user_id),
    url: String(row.url),
    description: String(row.description ?? ''),
    events: parseJson<HookEventType[]>(row.events, []),
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
}

export function deliveryRecord(row: Record<string, unknown>): DeliveryRecord {
  const state = Number(row.state);
  return {
    id: Number(row.id),
    webhook_id: Number(row.endpoint_id),
    event_id: String(row.event_id),
    type: String(row.event_type),
    status: STATUS_OF[state] ?? 'pending',
    attempts: Number(row.attempts),
    response_code: row.response_code === null || row.response_code === undefined ? null : Number(row.response_code),
    error: row.last_error === null || row.last_error === undefined ? null : String(row.last_error),
    next_attempt_at: state === HOOK_DELIVERY_STATE.pending ? timestamp(row.next_attempt_at) : null,
    delivered_at: timestamp(row.delivered_at),
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
    data: parseJson<unknown>(row.data, null),
  };
}

/** A Standard Webhooks signing secret: `whsec_` and base64 of 32 random bytes (the HMAC key). */
function newSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64')}`;
}

/**
 * Outgoing webhooks: an account's endpoints, their delivery log and replay.
 * Events are written by `emitHookEvents` (hook-outbox.ts) in the transactions of the changes;
 * workers deliver them (src/mail/hook-deliverer.ts). The signing secret is shown once, at save
 * (or when rotated); the database keeps it sealed with the app secret, since signing needs it.
 */
export function createOutgoingWebhooksService({ db, config, secret: appSecret }: Pick<ServiceDeps, 'db' | 'config' | 'secret'>) {
  const owned = (ctx: Ctx, id: number) => db('webhook_endpoints').where({ id, user_id: ctx.userId });

  /** Refuses a URL whose host does not resolve, or resolves to a private address (unless WEBHOOK_ALLOW_PRIVATE). */
  async function checkUrl(url: string): Promise<void> {
    const refused = await refusedHost(new URL(url).hostname, config.webhookAllowPrivate);
    if (refused === 'not found') throw ValidationError.of('url', 'The url host could not be found.');
    if (refused) throw ValidationError.of('url', 'The url must point to a public address, not a private, loopback or link-local one.');
  }

  async function find(ctx: Ctx, id: number): Promise<Record<string, unknown>> {
    const row = await owned(ctx, id).first();
    if (!row) throw new NotFoundError();
    return row;
  }

  return {
    async list(ctx: Ctx, paging?: Paging) {
      const query = db('webhook_endpoints').where({ user_id: ctx.userId }).orderBy('id', 'desc').select('id', 'user_id', 'url', 'description', 'events', 'created_at', 'updated_at');
      return listPage(query, paging, webhookRecord);
    },

    async get(ctx: Ctx, id: number): Promise<WebhookRecord> {
      return webhookRecord(await find(ctx, id));
    },

    /** A new endpoint; the answer carries its signing secret, the only time it is shown. */
    async save(ctx: Ctx, input: WebhookInput): Promise<WebhookRecord & { secret: string }> {
      await checkUrl(input.url);
      const secret = newSecret();
      const now = nowValue();
      const id = await db.transaction(async (trx) => {
        const [{ n }] = await trx('webhook_endpoints').where({ user_id: ctx.userId }).count({ n: '*' });
        if (Number(n) >= HOOK_DELIVERY.maxEndpoints) {
          throw new ConflictError(`An account may have at most ${HOOK_DELIVERY.maxEndpoints} webhooks; delete one first.`);
        }
        const created = await insertId(trx, 'webhook_endpoints', {
          user_id: ctx.userId,
          url: input.url,
          description: input.description,
          events: JSON.stringify(input.events),
          secret_sealed: sealSecret(appSecret, HOOK_SECRET_PURPOSE, secret),
          created_at: now,
          updated_at: now,
        });
        await recordAudit(trx, ctx, { action: 'webhook.created', recordType: 'webhook', recordId: created, summary: input.url }, now);
        return created;
      });
      return { ...webhookRecord(await find(ctx, id)), secret };
    },

    /** Changes url, events and description; `rotate` makes a new secret, answered once. */
    async update(ctx: Ctx, id: number, input: WebhookInput, rotate = false): Promise<WebhookRecord> {
      await find(ctx, id);
      await checkUrl(input.url);
      const secret = rotate ? newSecret() : undefined;
      await db.transaction(async (trx) => {
        await trx('webhook_endpoints').where({ user_id: ctx.userId, id }).update({
          url: input.url,
          description: input.description,
          events: JSON.stringify(input.events),
          ...(secret ? { secret_sealed: sealSecret(appSecret, HOOK_SECRET_PURPOSE, secret) } : {}),
          updated_at: nowValue(),
        });
        await recordAudit(trx, ctx, { action: 'webhook.updated', recordType: 'webhook', recordId: id, summary: secret ? `${input.url} (new secret)` : input.url });
      });
      const record = webhookRecord(await find(ctx, id));
      return secret ? { ...record, secret } : record;
    },

    /** Deletes endpoints with their delivery logs (pending deliveries are not sent). */
    async remove(ctx: Ctx, ids: number[]): Promise<void> {
      await db.transaction(async (trx) => {
        const rows = await trx('webhook_endpoints').where({ user_id: ctx.userId }).whereIn('id', ids).select('id');
        if (!rows.length) throw new NotFoundError();
        const found = rows.map((r) => Number(r.id));
        await trx('webhook_deliveries').whereIn('endpoint_id', found).delete();
        await trx('webhook_endpoints').whereIn('id', found).delete();
        await recordAudit(trx, ctx, found.map((f) => ({ action: 'webhook.deleted' as const, recordType: 'webhook', recordId: f })));
      });
    },

    /** An endpoint's delivery log, newest first, one page at a time. */
    async deliveries(ctx: Ctx, id: number, paging: Paging) {
      await find(ctx, id);
      return listPage(db('webhook_deliveries').where({ endpoint_id: id }).orderBy('id', 'desc'), paging, deliveryRecord);
    },

    /** Counts of an endpoint's deliveries by status (the dashboard's summary). */
    async deliveryCounts(ctx: Ctx, id: number): Promise<Record<DeliveryStatus, number>> {
      await find(ctx, id);
      const rows: Array<{ state: unknown; n: unknown }> = await db('webhook_deliveries').where({ endpoint_id: id }).groupBy('state').select('state', db.raw('count(*) as n'));
      const counts: Record<DeliveryStatus, number> = { pending: 0, delivered: 0, failed: 0 };
      for (const row of rows) counts[STATUS_OF[Number(row.state)] ?? 'pending'] += Number(row.n);
      return counts;
    },

    /**
     * Sends one delivered or failed event again, alone, as a new delivery: the payload and its
     * `id` are the event's own, so a receiver can tell it is the same event.
     */
    async replay(ctx: Ctx, webhookId: number, deliveryId: number): Promise<DeliveryRecord> {
      const row = await db('webhook_deliveries').where({ id: deliveryId, endpoint_id: webhookId, user_id: ctx.userId }).first();
      if (!row) throw new NotFoundError();
      if (Number(row.state) === HOOK_DELIVERY_STATE.pending) throw new ConflictError('This event is still being delivered; send it again once it has been delivered or has failed.');
      const now = nowValue();
      const id = await insertId(db, 'webhook_deliveries', {
        user_id: row.user_id,
        endpoint_id: row.endpoint_id,
        event_id: row.event_id,
        event_type: row.event_type,
        message_id: row.event_id,
        data: row.data,
        contact_key: row.contact_key,
        state: HOOK_DELIVERY_STATE.pending,
        attempts: 0,
        next_attempt_at: now,
        created_at: now,
        updated_at: now,
      });
      return deliveryRecord(await db('webhook_deliveries').where({ id }).first());
    },
  };
}

export type OutgoingWebhooksService = ReturnType<typeof createOutgoingWebhooksService>;
