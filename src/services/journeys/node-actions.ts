import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { parseJson, jsonValue } from '../../db/dialect';
import type { SqlFragment } from '../../db/expressions';
import { RESERVED_FIELD_NAMES } from '../../lib/constants';
import { zonedToUtc, utcToZoned } from '../../lib/zoned-time';
import { emitToEndpoint } from '../integrations/hook-outbox';
import { contactZone } from '../shared/contact-zones';
import { compileRules, SegmentField } from '../audience/segment-rules';
import type { EmailEvent, FieldRule, JourneyNode } from './graph';
import type { RuleSource } from './rule-source';

/**
 * What each node does to a contact, called by the engine inside the move's transaction: the
 * checks of conditions and waits, the writes of set_field, email and webhook steps.
 */

/** Where an enrolment stands (its row). */
export interface Position {
  id: number;
  user_id: number;
  automation_id: number;
  contact_id: number | null;
  segment_recipient_id: number | null;
  email: string;
  email_key: string;
  journey_version_id: number;
  node_id: string;
  node_entered_at: unknown;
  waits_for: string | null;
  timeout_at: unknown;
  next_due_at: unknown;
}

/** What a journey's webhook posts besides the contact: read once per pass, not per contact. */
export interface WebhookSource {
  automation: { utr: string; name: string };
  version: number;
  /** The account's outgoing webhook at that address, undefined when it was deleted since the save. */
  endpointId: number | undefined;
}

/** The automation, version and endpoint a webhook node posts with (`WebhookSource`). */
export async function webhookSource(db: Knex | Knex.Transaction, row: Position, url: string): Promise<WebhookSource> {
  const [endpoint, automation, version] = await Promise.all([
    db('webhook_endpoints').where({ user_id: row.user_id, url }).orderBy('id').first('id'),
    db('automations').where({ id: row.automation_id }).first('utr', 'automation_name'),
    db('journey_versions').where({ id: row.journey_version_id }).first('version'),
  ]);
  return {
    automation: { utr: String(automation?.utr ?? ''), name: String(automation?.automation_name ?? '') },
    version: Number(version?.version ?? 0),
    endpointId: endpoint ? Number(endpoint.id) : undefined,
  };
}

/**
 * Queues a signed POST of the contact and the journey to the account's outgoing webhook, in the
 * move's transaction. Undefined when that webhook was deleted since the save.
 */
export async function postToWebhook(trx: Knex.Transaction, row: Position, source: WebhookSource, at: string): Promise<string | undefined> {
  if (source.endpointId === undefined) return undefined;
  return emitToEndpoint(trx, {
    userId: row.user_id,
    endpointId: source.endpointId,
    type: 'journey.webhook',
    contactKey: row.email_key,
    data: {
      automation: source.automation,
      journey: { version: source.version, node: row.node_id },
      contact: { id: row.contact_id, email: row.email },
    },
  }, at);
}

/**
 * A contact's split branch: a stable hash of the automation, the node and the contact's address
 * mapped onto 0-99, so the same contact takes the same branch on every pass and re-entry.
 */
export function splitBranch(automationId: number, nodeId: string, emailKey: string, percents: number[]): number {
  const digest = crypto.createHash('sha256').update(`${automationId}:${nodeId}:${emailKey}`).digest();
  const point = digest.readUInt32BE(0) % 100;
  let upTo = 0;
  for (let i = 0; i < percents.length; i += 1) {
    upTo += percents[i];
    if (point < upTo) return i;
  }
  return percents.length - 1;
}

export async function delayEnd(trx: Knex.Transaction, row: Position, node: Extract<JourneyNode, { type: 'delay' }>, now: Date): Promise<Date> {
  if (node.until === undefined) {
    const minutes = (node.minutes ?? 0) + (node.hours ?? 0) * 60 + (node.days ?? 0) * 1440;
    return new Date(now.getTime() + minutes * 60_000);
  }
  const zone = row.contact_id === null ? String((await trx('accounts').where({ id: row.user_id }).first('time_zone'))?.time_zone ?? 'UTC') : await contactZone(trx, row.user_id, row.contact_id);
  return nextLocalMoment(now, node.until, node.weekdays ?? [1, 2, 3, 4, 5, 6, 7], zone);
}

/** The first moment after `now` at `time` (HH:MM) on one of `weekdays` (1 Monday … 7 Sunday) in `zone`. */
export function nextLocalMoment(now: Date, time: string, weekdays: number[], zone: string): Date {
  const today = utcToZoned(now, zone).date;
  for (let day = 0; day <= 8; day += 1) {
    const date = new Date(Date.parse(`${today}T00:00:00Z`) + day * 86_400_000).toISOString().slice(0, 10);
    const weekday = ((new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7) + 1;
    if (!weekdays.includes(weekday)) continue;
    const candidate = zonedToUtc(date, `${time}:00`, zone);
    if (candidate.getTime() > now.getTime()) return candidate;
  }
  return new Date(now.getTime() + 7 * 86_400_000);
}

/** Whether the contact opened (by a person) or clicked the mail of an email node of this journey. */
export async function emailEvent(trx: Knex.Transaction, enrolmentId: number, nodeId: string, event: EmailEvent): Promise<boolean> {
  const query = trx('send_messages as m')
    .join('journey_visits as v', 'v.id', 'm.journey_visit_id')
    .where('v.enrolment_id', enrolmentId)
    .where('v.node_id', nodeId);
  // A click is a person's doing, so it counts as an open too; automated opens do not count.
  if (event === 'clicked') query.whereNotNull('m.clicked_at');
  else query.where((q) => q.whereNotNull('m.human_opened_at').orWhereNotNull('m.clicked_at'));
  return Boolean(await query.first('m.id'));
}

export async function inSegment(trx: Knex.Transaction, row: Position, segmentId: number): Promise<boolean> {
  return Boolean(
    await trx('segment_recipients as r')
      .join('segments as s', 's.id', 'r.segment_id')
      .where({ 'r.segment_id': segmentId, 's.user_id': row.user_id, 'r.email_key': row.email_key })
      .whereNull('s.deleted_at')
      .first('r.id'),
  );
}

/** A field rule compiled as segments compile it, over the contact's row (`c`): the same for every contact of an account in a pass. */
export async function compileCondition(db: Knex | Knex.Transaction, userId: number, rule: FieldRule, now: Date, rules: RuleSource): Promise<SqlFragment> {
  const { fields, countryOf } = await rules.forAccount(db, userId);
  const values = rule.value === undefined ? [] : Array.isArray(rule.value) ? rule.value : [rule.value];
  return compileRules(db as Knex, { fields: [rule.field], operators: [rule.operator.toLowerCase()], values, queryType: 'and' }, fields as Map<string, SegmentField>, countryOf, { userId, now });
}

/** Whether the contact's row meets a compiled condition. A contact-less address matches nothing. */
export async function matches(trx: Knex.Transaction, row: Position, where: SqlFragment): Promise<boolean> {
  if (row.contact_id === null) return false;
  const found = await trx('contacts as c')
    .where('c.id', row.contact_id)
    .where('c.user_id', row.user_id)
    .whereNull('c.deleted_at')
    .whereRaw(where.sql, where.bindings)
    .first('c.id');
  return Boolean(found);
}

export async function setField(trx: Knex.Transaction, row: Position, field: string, value: string, now: Date): Promise<void> {
  if (row.contact_id === null) return;
  const contact = trx('contacts').where({ id: row.contact_id, user_id: row.user_id }).whereNull('deleted_at');
  if (RESERVED_FIELD_NAMES.includes(field)) {
    await contact.update({ [field]: value, updated_at: now.toISOString() });
    return;
  }
  const current = await contact.clone().first('custom_fields');
  if (!current) return;
  const stored = parseJson<Record<string, string | null>>(current.custom_fields, {});
  await contact.clone().update({ custom_fields: jsonValue({ ...stored, [field]: value === '' ? null : value }), updated_at: now.toISOString() });
}
