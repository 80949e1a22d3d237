import type { Knex } from 'knex';
import { refuseUnauthenticated } from '../delivery/relays';
import { insertId, nowValue, toCount } from '../../db/dialect';
import { listPage, Paging } from '../../db/paging';
import { AUTOMATION_STATUS as A, LIMITS } from '../../lib/constants';
import { ConflictError, FieldErrors, NotFoundError } from '../../lib/errors';
import { plainDateTime, timestamp } from '../../lib/time';
import { isUtr, newUtr } from '../../lib/utr';
import { throwIfAny } from '../../lib/validation';
import { transitionAutomations } from './automation-state';
import { recordFirstGoLive, GoingLive } from './enrolment';
import { copySchedules } from './schedule-copy';
import type { SegmentsService } from '../audience/segments';
import type { CampaignRefs, RecipientRef } from './campaign-refs';
import type { Ctx, ServiceDeps } from '../context';
import { audited, recordAudit } from '../shared/audit-writer';

/** The reference's exact sentence for set-live without a group. */
export const NO_GROUP_TO_GO_LIVE = 'Unsubscribe group require to live automation';

// `total_failed` (messages given up after their retries), `total_unique_clicks`, `total_clicks` and `total_template_errors`
// (delivered messages in which a Liquid value failed and was left empty) are extensions of the reference's record.
const TOTALS = [
  'total_triggered', 'total_delivered', 'total_unique_opens', 'total_opens', 'total_bounces', 'total_unsubscribe', 'total_failed',
  'total_unique_clicks', 'total_clicks', 'total_template_errors',
] as const;

export function automationRecord(row: Record<string, unknown>) {
  const record = {
    id: Number(row.id),
    user_id: Number(row.user_id),
    automation_for: row.automation_for === null || row.automation_for === undefined ? null : Number(row.automation_for),
    automation_for_table: row.automation_for_table === null || row.automation_for_table === undefined ? null : String(row.automation_for_table),
    automation_name: String(row.automation_name),
    exit_criteria: Number(row.exit_criteria),
    // The reference shows the group id as a string.
    unsubscribe_group_id: row.unsubscribe_group_id === null || row.unsubscribe_group_id === undefined ? null : String(row.unsubscribe_group_id),
    automation_type: Number(row.automation_type),
    utr: String(row.utr),
    status: Number(row.status),
    live_at: plainDateTime(row.live_at),
    ...(Object.fromEntries(TOTALS.map((name) => [name, Number(row[name] ?? 0)])) as Record<(typeof TOTALS)[number], number>),
    deleted_at: timestamp(row.deleted_at),
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
  return row.automation_schedule_count === undefined ? record : { ...record, automation_schedule_count: toCount(row.automation_schedule_count) };
}

export type AutomationRecord = ReturnType<typeof automationRecord>;

export interface AutomationInput {
  automation_type: number;
  automation_name: string;
  /** null: no target yet */
  automation_for: RecipientRef | null;
  /** null: no group yet (set-live will refuse) */
  unsubscribe_group_id: number | null;
}

/** `POST /automations/update?utr=`: only the fields given change; null clears a target or group. */
export type AutomationChanges = Partial<Omit<AutomationInput, 'automation_type'>>;

interface AutomationDeps extends Pick<ServiceDeps, 'db' | 'config'> {
  refs: CampaignRefs;
  segments: Pick<SegmentsService, 'refresh'>;
}

/** The columns in which an automation stores its target. */
function targetColumns(ref: RecipientRef | null | undefined): Record<string, unknown> {
  if (ref === undefined) return {};
  return ref === null ? { automation_for: null, automation_for_table: null } : { automation_for: Number(ref.id), automation_for_table: ref.table };
}

export function createAutomationsService({ db, config, refs, segments }: AutomationDeps) {
  const live = (ctx: Ctx, q: Knex | Knex.Transaction = db) => q('automations').where({ user_id: ctx.userId }).whereNull('deleted_at');

  async function requireRow(ctx: Ctx, utr: string): Promise<Record<string, unknown>> {
    const row = isUtr(utr) ? await live(ctx).where({ utr }).first() : undefined;
    if (!row) throw new NotFoundError();
    return row;
  }

  /** Brings a segment target's rule members up to date; a segment deleted since has none. */
  async function refreshTarget(ctx: Ctx, segmentId: number, trx: Knex.Transaction): Promise<void> {
    try {
      await segments.refresh(ctx, segmentId, trx);
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
  }

  /** The target and group, when given, must be the account's own. */
  async function checkReferences(ctx: Ctx, input: AutomationChanges): Promise<void> {
    const errors: FieldErrors = {};
    if (input.automation_for) {
      const error = await refs.recipientsError(ctx, [input.automation_for], 'automation_for');
      if (error) errors.automation_for = [error];
    }
    if (input.unsubscribe_group_id !== null && input.unsubscribe_group_id !== undefined) {
      const error = await refs.groupError(ctx, input.unsubscribe_group_id);
      if (error) errors.unsubscribe_group_id = [error];
    }
    throwIfAny(errors);
  }

  return {
    async list(ctx: Ctx, paging?: Paging) {
      const scheduleCount = db('automation_schedules')
        .count('*')
        .whereRaw('automation_schedules.automation_id = automations.id')
        .as('automation_schedule_count');
      return listPage(live(ctx).select('automations.*', scheduleCount).orderBy('id', 'desc'), paging, automationRecord);
    },

    async get(ctx: Ctx, utr: string): Promise<AutomationRecord> {
      return automationRecord(await requireRow(ctx, utr));
    },

    /** Why the service paused the automation (its page says it), or null. */
    async pausedReason(ctx: Ctx, utr: string): Promise<string | null> {
      const row = await requireRow(ctx, utr);
      return Number(row.status) === A.paused && row.paused_reason ? String(row.paused_reason) : null;
    },

    /** The live automation's id, for its schedules; 404 when the utr names none of this account. */
    async idOf(ctx: Ctx, utr: string): Promise<number> {
      return Number((await requireRow(ctx, utr)).id);
    },

    /** A draft automation; answers its utr. */
    async create(ctx: Ctx, input: AutomationInput): Promise<string> {
      await checkReferences(ctx, input);
      const now = nowValue();
      const utr = newUtr();
      await audited(db, ctx, (trx) => insertId(trx, 'automations', {
        user_id: ctx.userId,
        automation_type: input.automation_type,
        automation_name: input.automation_name,
        ...targetColumns(input.automation_for),
        unsubscribe_group_id: input.unsubscribe_group_id,
        exit_criteria: 0,
        status: A.draft,
        utr,
        created_at: now,
        updated_at: now,
      }), () => ({ action: 'automation.created', recordType: 'automation', recordId: utr, summary: input.automation_name }));
      return utr;
    },

    async update(ctx: Ctx, utr: string, changes: AutomationChanges): Promise<void> {
      const row = await requireRow(ctx, utr);
      await checkReferences(ctx, changes);
      if (changes.unsubscribe_group_id === null && Number(row.status) === A.live) {
        throw new ConflictError('A live automation needs its unsubscribe group; pause it before removing the group.');
      }
      const columns: Record<string, unknown> = { ...targetColumns(changes.automation_for), updated_at: nowValue() };
      if (changes.automation_name !== undefined) columns.automation_name = changes.automation_name;
      if (changes.unsubscribe_group_id !== undefined) columns.unsubscribe_group_id = changes.unsubscribe_group_id;
      await audited(db, ctx, (trx) => live(ctx, trx).where({ id: row.id }).update(columns), () => ({
        action: 'automation.updated', recordType: 'automation', recordId: utr, summary: String(changes.automation_name ?? row.automation_name),
      }));
    },

    /** A draft copy named `Copy of …` with copies of its schedules; answers the copy's utr. */
    async duplicate(ctx: Ctx, utr: string): Promise<string> {
      const row = await requireRow(ctx, utr);
      const copyUtr = newUtr();
      const now = nowValue();
      await db.transaction(async (trx) => {
        const copyId = await insertId(trx, 'automations', {
          user_id: ctx.userId,
          automation_type: row.automation_type,
          automation_name: `Copy of ${row.automation_name}`.slice(0, LIMITS.string),
          automation_for: row.automation_for,
          automation_for_table: row.automation_for_table,
          unsubscribe_group_id: row.unsubscribe_group_id,
          exit_criteria: row.exit_criteria,
          status: A.draft,
          utr: copyUtr,
          created_at: now,
          updated_at: now,
        });
        await copySchedules(trx, Number(row.id), copyId, now);
        await recordAudit(trx, ctx, { action: 'automation.created', recordType: 'automation', recordId: copyUtr, summary: `Copy of ${row.automation_name}` }, now);
      });
      return copyUtr;
    },

    /**
     * Takes a draft or paused automation live; a live one stays as it is. The first go-live
     * takes the target's snapshot in the same transaction (a segment target refreshed first):
     * a welcome automation reaches exactly the contacts who join after this answers.
     */
    async setLive(ctx: Ctx, utr: string): Promise<void> {
      const row = await requireRow(ctx, utr);
      if (row.unsubscribe_group_id === null || row.unsubscribe_group_id === undefined) throw new ConflictError(NO_GROUP_TO_GO_LIVE);
      if (Number(row.status) === A.live) return;
      // Every step's sender: the automation mails from each.
      const fromEmails = config.domains.requireDomainAuth
        ? (await db('automation_schedules as s').join('senders as f', 'f.id', 's.sender_id').where('s.automation_id', Number(row.id)).distinct('f.from_email')).map((r) => String(r.from_email))
        : [];
      await refuseUnauthenticated(db, config.domains.requireDomainAuth, ctx.userId, fromEmails);
      const now = nowValue();
      const changed = await db.transaction(async (trx) => {
        const updated = await transitionAutomations(trx('automations').where({ id: row.id }), 'setLive', { live_at: now, paused_reason: null, updated_at: now });
        if (!updated) return false;
        if (row.automation_for_table === 'segments_' && row.automation_for !== null) await refreshTarget(ctx, Number(row.automation_for), trx);
        await recordFirstGoLive(trx, row as unknown as GoingLive, Number(row.status), now);
        await recordAudit(trx, ctx, { action: 'automation.live', recordType: 'automation', recordId: utr, summary: String(row.automation_name) }, now);
        return true;
      });
      // Nothing changed: another request took it live meanwhile (fine) or deleted it.
      if (!changed) await requireRow(ctx, utr);
    },

    async pause(ctx: Ctx, utr: string): Promise<void> {
      const row = await requireRow(ctx, utr);
      const changed = await db.transaction(async (trx) => {
        const paused = await transitionAutomations(trx('automations').where({ id: row.id }), 'pause', { paused_reason: null, updated_at: nowValue() });
        if (paused) await recordAudit(trx, ctx, { action: 'automation.paused', recordType: 'automation', recordId: utr, summary: String(row.automation_name) });
        return paused;
      });
      if (!changed) throw new ConflictError('Only a live automation can be paused; set it live first.');
    },

    async remove(ctx: Ctx, utr: string): Promise<void> {
      const row = await requireRow(ctx, utr);
      const now = nowValue();
      await audited(db, ctx, (trx) => live(ctx, trx).where({ id: row.id }).update({ deleted_at: now, updated_at: now }), () => ({
        action: 'automation.deleted', recordType: 'automation', recordId: utr, summary: String(row.automation_name),
      }));
    },

    async removeMany(ctx: Ctx, ids: number[]): Promise<void> {
      const now = nowValue();
      await db.transaction(async (trx) => {
        const rows = await live(ctx, trx).whereIn('id', ids).select('id', 'utr', 'automation_name');
        if (!rows.length) throw new NotFoundError();
        await live(ctx, trx).whereIn('id', rows.map((r) => r.id)).update({ deleted_at: now, updated_at: now });
        await recordAudit(trx, ctx, rows.map((r) => ({ action: 'automation.deleted' as const, recordType: 'automation', recordId: String(r.utr), summary: String(r.automation_name) })), now);
      });
    },
  };
}

export type AutomationsService = ReturnType<typeof createAutomationsService>;
