import type { Knex } from 'knex';
import type { ServiceDeps } from '../context';

/** Rows of workers that have not beaten for this long are deleted by the next beat of any worker. */
const FORGET_AFTER_MS = 24 * 3600_000;

export interface Readiness {
  ready: boolean;
  /** Why the process is not ready (one line), when it is not. */
  reason?: string;
  database: 'ok' | 'unreachable';
  /** `current`: every migration of this build is applied, and no other; `behind`/`ahead` otherwise. */
  schema: 'current' | 'behind' | 'ahead' | 'unknown';
  /** Seconds since the newest worker heartbeat; null when no worker has beaten (or the database did not answer). */
  workerHeartbeatAgeSeconds: number | null;
}

/** The first line of an error's message, short: a failed query's message carries its SQL. */
const firstLine = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0].slice(0, 200);

export const ageSeconds = (at: Date | null, now: Date) => (at ? Math.max(0, Math.round((now.getTime() - at.getTime()) / 100) / 10) : null);

/** The newest heartbeat of any worker, or null. */
export async function lastHeartbeat(db: Knex): Promise<Date | null> {
  const row = await db('worker_heartbeats').max('beat_at as at').first();
  return row?.at ? new Date(row.at) : null;
}

/**
 * Whether this process can serve: the database answers and records exactly this build's
 * migrations; and when the sending workers last said they were alive (the workers write
 * `worker_heartbeats`).
 */
export function createHealthService(deps: Pick<ServiceDeps, 'db' | 'migrationNames'>) {
  const { db } = deps;
  const expected = deps.migrationNames;

  return {
    /** Records that the worker `owner` is alive now; forgets workers silent for a day. */
    async beat(owner: string, role: string, startedAt: Date, now = new Date()): Promise<void> {
      await db('worker_heartbeats')
        .insert({ owner, role, started_at: startedAt.toISOString(), beat_at: now.toISOString() })
        .onConflict('owner')
        .merge(['beat_at']);
      await db('worker_heartbeats').where('beat_at', '<', new Date(now.getTime() - FORGET_AFTER_MS).toISOString()).delete();
    },

    lastHeartbeat: () => lastHeartbeat(db),

    /**
     * Resolves once the database answers a query that reads it (SQLite answers `select 1`
     * without its file); rejects when it cannot be reached.
     */
    async ping(): Promise<void> {
      await db('knex_migrations').first('id');
    },

    async readiness(now = new Date()): Promise<Readiness> {
      let applied: string[];
      try {
        applied = (await db('knex_migrations').select('name')).map((row: { name: string }) => row.name);
      } catch (err) {
        return { ready: false, reason: `database unreachable: ${firstLine(err)}`, database: 'unreachable', schema: 'unknown', workerHeartbeatAgeSeconds: null };
      }
      const heartbeat = await lastHeartbeat(db).catch(() => null);
      const base = { database: 'ok' as const, workerHeartbeatAgeSeconds: ageSeconds(heartbeat, now) };
      if (!expected) return { ready: true, ...base, schema: 'unknown' };
      const known = new Set(expected);
      const unknown = applied.filter((name) => !known.has(name));
      if (unknown.length) {
        return { ready: false, reason: `schema ahead: the database has ${unknown.length} migration(s) this build does not know (${unknown[0]})`, ...base, schema: 'ahead' };
      }
      const done = new Set(applied);
      const missing = expected.filter((name) => !done.has(name));
      if (missing.length) {
        return { ready: false, reason: `schema behind: ${missing.length} migration(s) not applied (${missing[0]})`, ...base, schema: 'behind' };
      }
      return { ready: true, ...base, schema: 'current' };
    },
  };
}

export type HealthService = ReturnType<typeof createHealthService>;
