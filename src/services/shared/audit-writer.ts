import type { Knex } from 'knex';
import { nowValue, rowsPerInsert } from '../../db/dialect';
import { AuditAction, LIMITS } from '../../lib/constants';
import { Ctx, SYSTEM_ACTOR } from '../context';

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

const SUMMARY_MAX = 500;

/**
 * The wording of summaries that say more than a record's name, kept in one place so every
 * entry reads the same way: the thing by its name (never an id), what happened in plain words.
 */
export const summaries = {
  /** A single send released: at once, or for its date and time (seconds and machine words left out). */
  released(name: string, release: { now: boolean; date?: string; time?: string; recipientsClock?: boolean }): string {
    if (release.now) return `${name}, sent at once`;
    const when = `${release.date ?? ''} ${String(release.time ?? '').slice(0, 5)}`.trim();
    return `${name}, for ${when}${release.recipientsClock ? ' in each recipient’s time zone' : ''}`;
  },
  /** A copy names its original by name, not by its id. */
  copied(name: string, original: string): string {
    return `${name}, copied from “${original}”`;
  },
  /** A custom field with its kind in the words the dashboard uses. */
  field(name: string, type: string): string {
    return `${name} (${FIELD_TYPE_WORDS[type] ?? type})`;
  },
  /** Messages of a send queued again. */
  retried(name: string, count: number): string {
    return `${name}: ${count} ${count === 1 ? 'message' : 'messages'}`;
  },
  /** An A/B test's winner sent to the rest: by its letter, chosen by the test's rule or by hand. */
  abWinner(name: string, winner: number, by: 'rule' | 'hand', released: number): string {
    const letter = 'ABCD'[winner] ?? String(winner + 1);
    return `${name}: variant ${letter} ${by === 'rule' ? 'won by the test’s rule' : 'picked by hand'}, sent to the other ${released} ${released === 1 ? 'recipient' : 'recipients'}`;
  },
  /** A recipients download: whose, and which. */
  recipientsDownload(name: string, status?: string): string {
    return `Recipients of ${name}${status ? ` (${status})` : ''}, as CSV`;
  },
};

const FIELD_TYPE_WORDS: Record<string, string> = { text: 'text', number: 'number', 'datetime-local': 'date and time' };

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
