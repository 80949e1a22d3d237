import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { nowValue, parseJson, rowsPerInsert } from '../../db/dialect';
import { BATCHED_HOOK_EVENTS, HOOK_DELIVERY_STATE, HookEventType, MESSAGE_KIND } from '../../lib/constants';
import { timestamp } from '../../lib/time';

/** One event before it is written: whose, what it says, and whose contact it concerns (for ordering). */
export interface HookEventDraft {
  userId: number;
  data: Record<string, unknown>;
  /** The contact's email key: an endpoint gets one contact's events in the order they happened. */
  contactKey?: string | null;
}

/** A new event id (the payload's `id`, and `webhook-id` of a request carrying it alone). */
export function hookEventId(): string {
  return `msg_${crypto.randomUUID().replace(/-/g, '')}`;
}

/** The endpoints of these accounts subscribed to `type`, by account. */
async function subscribers(trx: Knex, type: HookEventType, userIds: number[]): Promise<Map<number, number[]>> {
  const byUser = new Map<number, number[]>();
  const distinct = [...new Set(userIds)];
  if (!distinct.length) return byUser;
  const rows = await trx('webhook_endpoints').whereIn('user_id', distinct).select('id', 'user_id', 'events');
  for (const row of rows) {
    if (!parseJson<string[]>(row.events, []).includes(type)) continue;
    const list = byUser.get(Number(row.user_id)) ?? [];
    list.push(Number(row.id));
    byUser.set(Number(row.user_id), list);
  }
  return byUser;
}

/**
 * Writes events of one type to the outbox of every endpoint of their accounts that subscribes
 * to it, in the caller's transaction (the event exists exactly when the change it reports was
 * committed). `drafts` runs only when some endpoint subscribes, so an account without webhooks
 * pays one small query. Returns the deliveries written.
 */
export async function emitHookEvents(
  trx: Knex,
  type: HookEventType,
  userIds: number[],
  drafts: () => Promise<HookEventDraft[]> | HookEventDraft[],
  at: string = nowValue(),
): Promise<number> {
  const endpoints = await subscribers(trx, type, userIds);
  if (!endpoints.size) return 0;
  const rows: Record<string, unknown>[] = [];
  for (const draft of await drafts()) {
    const eventId = hookEventId();
    for (const endpointId of endpoints.get(draft.userId) ?? []) {
      // A batched type gets the id of its request when a worker forms the batch.
      rows.push(deliveryRow({ ...draft, endpointId, type }, eventId, BATCHED_HOOK_EVENTS.has(type) ? null : eventId, at));
    }
  }
  const chunk = rowsPerInsert(trx, 13);
  for (let i = 0; i < rows.length; i += chunk) await trx('webhook_deliveries').insert(rows.slice(i, i + chunk));
  return rows.length;
}

/** An event for one endpoint of the account, whatever it subscribes to (a journey's webhook step names its endpoint). */
export interface EndpointEventDraft {
  userId: number;
  endpointId: number;
  type: string;
  data: Record<string, unknown>;
  contactKey?: string | null;
}

/**
 * Writes one event to one endpoint's outbox in the caller's transaction; the deliverer signs
 * it, checks the address and retries it as any other. Answers the event id.
 */
export async function emitToEndpoint(trx: Knex, draft: EndpointEventDraft, at: string = nowValue()): Promise<string> {
  const eventId = hookEventId();
  await trx('webhook_deliveries').insert(deliveryRow(draft, eventId, eventId, at));
  return eventId;
}

/** The outbox row of one event for one endpoint, pending and due at once. */
function deliveryRow(draft: EndpointEventDraft, eventId: string, messageId: string | null, at: string): Record<string, unknown> {
  return {
    user_id: draft.userId,
    endpoint_id: draft.endpointId,
    event_id: eventId,
    event_type: draft.type,
    message_id: messageId,
    data: JSON.stringify(draft.data),
    contact_key: draft.contactKey ?? null,
    state: HOOK_DELIVERY_STATE.pending,
    attempts: 0,
    next_attempt_at: at,
    created_at: at,
    updated_at: at,
  };
}

/** One message event: the ledger row it is about and what it adds to the message's fields. */
export interface MessageHookEvent {
  messageId: number;
  userId: number;
  extra?: Record<string, unknown>;
}

/**
 * message.* events of campaign and transactional messages (system mail has none): `data` is
 * the message (`message_id`, `email`, `contact_id`, `single_send_utr`, `automation_utr`,
 * `automation_schedule_utr`; a transactional message's with `transactional: true`, its `id` and
 * `tags`) plus the event's own fields.
 */
export async function emitMessageEvents(trx: Knex, type: HookEventType, events: MessageHookEvent[], at: string = nowValue()): Promise<number> {
  if (!events.length) return 0;
  return emitHookEvents(
    trx,
    type,
    events.map((e) => e.userId),
    async () => {
      const byId = new Map<number, Record<string, unknown>>();
      const ids = events.map((e) => Number(e.messageId));
      for (let i = 0; i < ids.length; i += 500) {
        const rows = await trx('send_messages as m')
          .leftJoin('single_sends as s', 's.id', 'm.single_send_id')
          .leftJoin('automations as a', 'a.id', 'm.automation_id')
          .leftJoin('automation_schedules as k', 'k.id', 'm.automation_schedule_id')
          .leftJoin('transactional_messages as t', 't.id', 'm.id')
          .whereIn('m.id', ids.slice(i, i + 500))
          .where((q) => q.whereNotNull('m.single_send_id').orWhereNotNull('m.automation_id').orWhere('m.kind', MESSAGE_KIND.transactional))
          .select('m.id', 'm.kind', 'm.email', 'm.email_key', 'm.contact_id', 's.utr as send_utr', 'a.utr as automation_utr', 'k.utr as schedule_utr', 't.tags as tx_tags');
        for (const row of rows) byId.set(Number(row.id), row);
      }
      return events.flatMap((e) => {
        const m = byId.get(Number(e.messageId));
        if (!m) return [];
        const data = {
          message_id: Number(e.messageId),
          email: String(m.email),
          contact_id: m.contact_id === null ? null : Number(m.contact_id),
          single_send_utr: m.send_utr ?? null,
          automation_utr: m.automation_utr ?? null,
          automation_schedule_utr: m.schedule_utr ?? null,
          ...(Number(m.kind) === MESSAGE_KIND.transactional ? { transactional: true, id: `tx_${Number(e.messageId)}`, tags: parseJson<string[]>(m.tx_tags, []) } : {}),
          occurred_at: timestamp(at),
          ...e.extra,
        };
        return [{ userId: e.userId, data, contactKey: String(m.email_key) }];
      });
    },
    at,
  );
}
