import type { Knex } from 'knex';
import { nowValue, rowsPerInsert } from '../../db/dialect';
import { listPage } from '../../db/paging';
import { AUDIT, AUDIT_ACTIONS, AuditAction, AuditActorType, LIMITS } from '../../lib/constants';
import { emailKey } from '../../lib/email-key';
import type { ListResult, Paging } from '../../lib/paging';
import { timestamp } from '../../lib/time';
import { Actor, Ctx, ServiceDeps, SYSTEM_ACTOR } from '../context';
import { userActor } from './team-identity';

/** What a change says about itself in the log. */
export interface AuditEntry {
  action: AuditAction;
  /** The kind of record changed (`single_send`, `contact`, …), when the change has one. */
  recordType?: string | null;
  /** Its id or utr. */
  recordId?: string | number | null;
  /** One line a person reads: the record's name, what changed. */
  summary?: string;
}

/** One entry as `GET /audit-log` answers it. */
export interface AuditRecord {
  id: number;
  user_id: number;
  actor: { type: AuditActorType; id: number | null; name: string };
  action: string;
  record_type: string | null;
  record_id: string | null;
  summary: string;
  ip: string | null;
  created_at: string | null;
}

/** The filters of the log: each narrows it, all together narrow it further. */
export interface AuditFilters {
  /** `user`, `api_key`, `system`, or one of them with its id (`user:12`). */
  actor?: string;
  /** An action (`single_send.started`) or all of one kind of record (`single_send`). */
  action?: string;
  /** Entries at or after this instant (an ISO date or date-time, UTC when no offset is given). */
  since?: string;
}


const SUMMARY_MAX = 500;

/** The record kinds the action names start with: `single_send` filters every action on sends. */
export const AUDIT_RECORD_KINDS: readonly string[] = [...new Set(AUDIT_ACTIONS.map((a) => a.split('.')[0]))];

/** Whether `value` is an action filter the log understands: an action, or a kind of record. */
export function isAuditActionFilter(value: string): boolean {
  return (AUDIT_ACTIONS as readonly string[]).includes(value) || AUDIT_RECORD_KINDS.includes(value);
}

/** `user`, `api_key`, `system`, optionally with `:id`. */
export const AUDIT_ACTOR_FILTER = /^(user|api_key|system)(?::(\d{1,10}))?$/;

/** The instant of a `since` filter, or undefined when it is not a date or date-time. */
export function sinceInstant(value: string): string | undefined {
  const text = value.trim();
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(text)) return undefined;
  const iso = text.length === 10 ? `${text}T00:00:00Z` : /(Z|[+-]\d{2}:?\d{2})$/.test(text) ? text.replace(' ', 'T') : `${text.replace(' ', 'T')}Z`;
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

function entryRows(ctx: Ctx, entries: AuditEntry[], at: string): Record<string, unknown>[] {
  const actor = ctx.actor ?? SYSTEM_ACTOR;
  return entries.map((e) => ({
    user_id: ctx.userId,
    actor_type: actor.type,
    actor_id: actor.id,
    actor_name: actor.name.slice(0, LIMITS.string),
    action: e.action,
    record_type: e.recordType ?? null,
    record_id: e.recordId === null || e.recordId === undefined ? null : String(e.recordId),
    summary: (e.summary ?? '').slice(0, SUMMARY_MAX),
    ip: ctx.ip ? ctx.ip.slice(0, 64) : null,
    created_at: at,
  }));
}

/**
 * Holds a request's route to what it declared: a route registered as a read that records a
 * change or an export is a route that changes something unguarded (an analyst could call it), so
 * the change fails with the transaction it is in, naming the route, instead of going through.
 */
function holdRouteToItsDeclaration(ctx: Ctx, list: AuditEntry[]): void {
  const route = ctx.route;
  if (!route) return;
  if (route.effect === 'reads') {
    throw new Error(`${route.name} is registered as a read but recorded ${list.map((e) => e.action).join(', ')}: declare what it does where it is registered (effect, src/http/permissions.ts).`);
  }
  route.recorded.push(...list.map((e) => e.action));
}

/**
 * Writes what `ctx`'s actor did, in the caller's transaction: the entry exists exactly when the
 * change it records was committed. A context without an actor is the service itself.
 */
export async function recordAudit(trx: Knex | Knex.Transaction, ctx: Ctx, entries: AuditEntry | AuditEntry[], at: string = nowValue()): Promise<void> {
  const list = Array.isArray(entries) ? entries : [entries];
  if (!list.length) return;
  holdRouteToItsDeclaration(ctx, list);
  const rows = entryRows(ctx, list, at);
  const chunk = rowsPerInsert(trx as Knex, 10);
  for (let i = 0; i < rows.length; i += chunk) await trx('audit_log').insert(rows.slice(i, i + chunk));
}

/**
 * Runs a change in a transaction of its own and records it there: `entries` sees what the change
 * answered (a new id, a count) and may answer no entry when nothing changed.
 */
export async function audited<T>(db: Knex, ctx: Ctx, change: (trx: Knex.Transaction) => Promise<T>, entries: (result: T) => AuditEntry | AuditEntry[]): Promise<T> {
  return db.transaction(async (trx) => {
    const result = await change(trx);
    await recordAudit(trx, ctx, entries(result));
    return result;
  });
}

export function auditRecord(row: Record<string, unknown>): AuditRecord {
  return {
    id: Number(row.id),
    user_id: Number(row.user_id),
    actor: {
      type: String(row.actor_type) as AuditActorType,
      id: row.actor_id === null || row.actor_id === undefined ? null : Number(row.actor_id),
      name: String(row.actor_name),
    },
    action: String(row.action),
    record_type: row.record_type === null || row.record_type === undefined ? null : String(row.record_type),
    record_id: row.record_id === null || row.record_id === undefined ? null : String(row.record_id),
    summary: String(row.summary ?? ''),
    ip: row.ip === null || row.ip === undefined ? null : String(row.ip),
    created_at: timestamp(row.created_at),
  };
}

/** The account's audit log: reading it with filters, the entries of one record, failed sign-ins, pruning. */
export function createAuditLogService({ db, config }: Pick<ServiceDeps, 'db' | 'config'>) {
  return {
    /** One page of the log, newest first (always paged: a log only grows). Filters are checked by the caller's rules. */
    async list(ctx: Ctx, filters: AuditFilters, paging?: Paging): Promise<ListResult<AuditRecord> & { pagination: NonNullable<ListResult<AuditRecord>['pagination']> }> {
      const query = db('audit_log').where('user_id', ctx.userId).orderBy('id', 'desc');
      const actor = filters.actor ? AUDIT_ACTOR_FILTER.exec(filters.actor) : null;
      if (actor) {
        query.where('actor_type', actor[1]);
        if (actor[2] !== undefined) query.where('actor_id', Number(actor[2]));
      }
      if (filters.action) {
        if ((AUDIT_ACTIONS as readonly string[]).includes(filters.action)) query.where('action', filters.action);
        else query.where('action', 'like', `${filters.action}.%`);
      }
      const since = filters.since ? sinceInstant(filters.since) : undefined;
      if (since) query.where('created_at', '>=', since);
      const result = await listPage(query.select('*'), paging ?? { page: 1, perPage: AUDIT.perPage }, auditRecord);
      return result as ListResult<AuditRecord> & { pagination: NonNullable<ListResult<AuditRecord>['pagination']> };
    },

    /** The entries about one record, oldest first (a send's page: who created it, who started it). */
    async ofRecord(ctx: Ctx, recordType: string, recordId: string | number, actions?: readonly AuditAction[]): Promise<AuditRecord[]> {
      const query = db('audit_log').where({ user_id: ctx.userId, record_type: recordType, record_id: String(recordId) }).orderBy('id', 'asc').limit(200);
      if (actions) query.whereIn('action', actions);
      return (await query.select('*')).map(auditRecord);
    },

    /** The people and keys named in the log that have an id of their own (the dashboard's filter), by name. */
    async actors(ctx: Ctx): Promise<Pick<Actor, 'type' | 'id' | 'name'>[]> {
      const rows: { actor_type: string; actor_id: number; name: string }[] = await db('audit_log')
        .where('user_id', ctx.userId)
        .whereNotNull('actor_id')
        .groupBy('actor_type', 'actor_id')
        .select('actor_type', 'actor_id', db.raw('max(actor_name) as name'))
        .limit(200);
      return rows
        .map((r) => ({ type: String(r.actor_type) as AuditActorType, id: Number(r.actor_id), name: String(r.name) }))
        .sort((a, b) => a.name.localeCompare(b.name));
    },

    /** Records a change that has no transaction of its own to join (a sign-in, an export streamed out). */
    async record(ctx: Ctx, entries: AuditEntry | AuditEntry[]): Promise<void> {
      await recordAudit(db, ctx, entries);
    },

    /**
     * A failed sign-in with an address that belongs to an account is recorded in that account
     * (an unknown address has no account to record it in). The actor is the address typed.
     */
    async signInFailed(email: string, ip: string | null | undefined, reason = 'Wrong password or not allowed to sign in'): Promise<void> {
      const row = await db('team_users').where({ email_key: emailKey(email) }).first('id', 'user_id', 'name', 'role');
      if (!row) return;
      const ctx: Ctx = { userId: Number(row.user_id), actor: userActor({ id: Number(row.id), name: String(row.name), role: row.role }), ip };
      await recordAudit(db, ctx, { action: 'user.sign_in_failed', recordType: 'user', recordId: Number(row.id), summary: `${reason} (${email.trim().slice(0, LIMITS.string)})` });
    },

    /** The days entries are kept (AUDIT_RETENTION_DAYS; 0 keeps them for ever). */
    retentionDays: () => config.auditRetentionDays,
  };
}

export type AuditLogService = ReturnType<typeof createAuditLogService>;
