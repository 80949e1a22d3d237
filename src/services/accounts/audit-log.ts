import type { Knex } from 'knex';
import { listPage } from '../../db/paging';
import { AUDIT, AUDIT_ACTIONS, AuditAction, AuditActorType, LIMITS } from '../../lib/constants';
import { emailKey } from '../../lib/email-key';
import type { ListResult, Paging } from '../../lib/paging';
import { timestamp } from '../../lib/time';
import type { Actor, Ctx, ServiceDeps } from '../context';
import { AuditEntry, recordAudit } from '../shared/audit-writer';
import { userActor } from './team-identity';

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
