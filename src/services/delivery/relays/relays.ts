import type { Knex } from 'knex';
import { insertId, nowValue, parseJson } from '../../../db/dialect';
import { listPage, Paging } from '../../../db/paging';
import { RELAY_LIMITS, RelayKind } from '../../../lib/constants';
import { openSecret, sealSecret } from '../../../lib/crypto';
import { ConflictError, NotFoundError, ValidationError } from '../../../lib/errors';
import { timestamp } from '../../../lib/time';
import { messages } from '../../../lib/validation';
import { checkRelayHost, classifyRelayError, createRelayTransport, relayHost, RelaySettings } from '../../../mail/relay-transports';
import type { Ctx, ServiceDeps } from '../../context';
import { recordAudit } from '../../shared/audit-writer';

/** The purpose relay secrets are sealed under (src/lib/crypto.ts). */
export const RELAY_SECRET_PURPOSE = 'relay-secret';

export interface RelayInput {
  name: string;
  kind: RelayKind;
  url: string | null;
  api_key: string | null;
  region: string | null;
  endpoint: string | null;
  max_rate: number;
  priority: number;
  domains: string[];
  /** SMTP: whether the server's certificate must verify; absent or null: true when saved, unchanged on update. */
  tls_verify?: boolean | null;
}

export type RelayHealth = 'up' | 'down';

export interface RelayRecord {
  id: number;
  user_id: number;
  name: string;
  kind: RelayKind;
  /** SMTP: the URL without its password. */
  url: string | null;
  region: string | null;
  endpoint: string | null;
  max_rate: number;
  priority: number;
  domains: string[];
  /** SMTP: whether the server's certificate must verify (false: a self-signed one is taken). */
  tls_verify: boolean;
  /** Whether a password or API key is stored (it is never shown). */
  has_secret: boolean;
  health: RelayHealth;
  down_until: string | null;
  last_error: string | null;
  last_error_at: string | null;
  /** When the relay was last tested (connected and logged in), and whether that worked; null: never tested. */
  tested_at: string | null;
  test_ok: boolean | null;
  created_at: string | null;
  updated_at: string | null;
}

/** A relay's row as stored. */
export type RelayRow = Record<string, unknown> & { id: number; user_id: number; kind: RelayKind; secret_sealed: string | null };

export function relayRecord(row: Record<string, unknown>, now = Date.now()): RelayRecord {
  const downUntil = row.down_until ? new Date(String(row.down_until)).getTime() : 0;
  const str = (v: unknown) => (v === null || v === undefined || v === '' ? null : String(v));
  return {
    id: Number(row.id),
    user_id: Number(row.user_id),
    name: String(row.name),
    kind: String(row.kind) as RelayKind,
    url: str(row.url),
    region: str(row.region),
    endpoint: str(row.endpoint),
    max_rate: Number(row.max_rate),
    priority: Number(row.priority),
    domains: parseJson<string[]>(row.domains, []),
    tls_verify: Number(row.tls_verify ?? 1) === 1,
    has_secret: Boolean(row.secret_sealed),
    health: downUntil > now ? 'down' : 'up',
    down_until: downUntil > now ? timestamp(row.down_until) : null,
    last_error: str(row.last_error),
    last_error_at: timestamp(row.last_error_at),
    tested_at: timestamp(row.tested_at),
    test_ok: row.test_ok === null || row.test_ok === undefined ? null : Number(row.test_ok) === 1,
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
}

/** An SMTP URL split into what is shown (no password) and what is sealed (the password). */
function splitSmtpUrl(url: string): { shown: string; password: string | null } {
  const parsed = new URL(url);
  const password = parsed.password ? decodeURIComponent(parsed.password) : null;
  parsed.password = '';
  return { shown: parsed.toString().replace(/\/$/, ''), password };
}

/** The settings a transport needs: the secret opened, the SMTP password put back in the URL. */
export function relaySettings(row: Record<string, unknown>, appSecret: string): RelaySettings {
  const secret = row.secret_sealed ? openSecret(appSecret, RELAY_SECRET_PURPOSE, String(row.secret_sealed)) : null;
  const kind = String(row.kind) as RelayKind;
  let url = row.url ? String(row.url) : null;
  if (kind === 'smtp' && url && secret) {
    const parsed = new URL(url);
    parsed.password = encodeURIComponent(secret);
    url = parsed.toString();
  }
  return {
    kind,
    url,
    apiKey: kind === 'smtp' ? null : secret,
    region: row.region ? String(row.region) : null,
    endpoint: row.endpoint ? String(row.endpoint) : null,
    tlsVerify: Number(row.tls_verify ?? 1) === 1,
  };
}

/** Whether a relay serves mail from `domain`: it lists none, or the domain or a parent of it. */
export function servesDomain(domains: readonly string[], domain: string): boolean {
  if (!domains.length) return true;
  const d = domain.toLowerCase();
  return domains.some((listed) => d === listed || d.endsWith(`.${listed}`));
}

/**
 * Marks a relay down after a failure: skipped by every worker until `down_until`, the backoff
 * doubling with each failure in a row (30 s up to 10 min). Of several workers noticing the same
 * outage at once, only the first counts it (the update is guarded by the count it read).
 */
export async function markRelayDown(db: Knex, relayId: number, error: string, now = new Date()): Promise<void> {
  const row = await db('relays').where({ id: relayId }).first('failures', 'down_until');
  if (!row) return;
  if (row.down_until && new Date(String(row.down_until)).getTime() > now.getTime()) return;
  const failures = Number(row.failures) + 1;
  const backoff = Math.min(RELAY_LIMITS.maxBackoffMs, RELAY_LIMITS.firstBackoffMs * 2 ** (failures - 1));
  await db('relays')
    .where({ id: relayId, failures: Number(row.failures) })
    .update({ failures, down_until: new Date(now.getTime() + backoff).toISOString(), last_error: error.slice(0, 500), last_error_at: now.toISOString() });
}

/** A relay that accepted a message after failing is healthy again: its next outage starts at 30 s. */
export async function markRelayUp(db: Knex, relayId: number): Promise<void> {
  await db('relays').where({ id: relayId }).where('failures', '>', 0).update({ failures: 0, down_until: null });
}

/**
 * An account's relays: SMTP servers and provider APIs its mail leaves through (the worker's
 * choice is relay-router.ts). Passwords and API keys are sealed with the app secret and never
 * shown again; hosts obey the private-address rule of outgoing webhooks.
 */
/** A relay as the audit log names it: its name and kind (never its address or secret). */
function relaySummary(values: Record<string, unknown>): string {
  return `${String(values.name)} (${String(values.kind)})`;
}

export function createRelaysService({ db, config, secret: appSecret }: Pick<ServiceDeps, 'db' | 'config' | 'secret'>) {
  const owned = (ctx: Ctx, id: number) => db('relays').where({ id, user_id: ctx.userId });

  async function find(ctx: Ctx, id: number): Promise<RelayRow> {
    const row = await owned(ctx, id).first();
    if (!row) throw new NotFoundError();
    return row as RelayRow;
  }

  /** The row's columns for an input; the secret kept when none is given (update). */
  async function columns(input: RelayInput, previous?: RelayRow): Promise<Record<string, unknown>> {
    let url: string | null = null;
    let secret: string | null = input.kind === 'smtp' ? null : input.api_key;
    if (input.kind === 'smtp') {
      if (!input.url) throw ValidationError.of('url', 'The url field is required when kind is smtp.');
      const split = splitSmtpUrl(input.url ?? '');
      url = split.shown;
      secret = split.password;
    }
    if (input.kind === 'ses' && secret !== null && !/^[^:]+:.+$/.test(secret)) {
      throw ValidationError.of('api_key', 'The api key of an SES relay must be the access key id and the secret access key, separated by a colon.');
    }
    const keep = secret === null && previous && previous.kind === input.kind ? previous.secret_sealed : null;
    if (input.kind !== 'smtp' && secret === null && !keep) throw ValidationError.of('api_key', 'The api key field is required.');
    const host = relayHost({ kind: input.kind, url, endpoint: input.endpoint, region: input.region });
    try {
      await checkRelayHost(host, config.relayAllowPrivate);
    } catch (err) {
      const field = input.kind === 'smtp' ? 'url' : 'endpoint';
      if ((err as { code?: string }).code === 'EDNS') throw ValidationError.of(field, `The ${field} host could not be found.`);
      throw ValidationError.of(field, `The ${field} must point to a public address, not a private, loopback or link-local one.`);
    }
    return {
      name: input.name,
      kind: input.kind,
      url,
      region: input.region,
      endpoint: input.endpoint,
      secret_sealed: secret !== null ? sealSecret(appSecret, RELAY_SECRET_PURPOSE, secret) : keep,
      max_rate: input.max_rate,
      priority: input.priority,
      domains: JSON.stringify(input.domains),
      tls_verify: (input.tls_verify ?? (previous ? Number(previous.tls_verify ?? 1) === 1 : true)) ? 1 : 0,
    };
  }

  return {
    async list(ctx: Ctx, paging?: Paging) {
      const query = db('relays').where({ user_id: ctx.userId }).orderBy('priority', 'desc').orderBy('id', 'desc');
      return listPage(query, paging, (row) => relayRecord(row));
    },

    async get(ctx: Ctx, id: number): Promise<RelayRecord> {
      return relayRecord(await find(ctx, id));
    },

    async save(ctx: Ctx, input: RelayInput): Promise<RelayRecord> {
      const values = await columns(input);
      const now = nowValue();
      const id = await db.transaction(async (trx) => {
        const [{ n }] = await trx('relays').where({ user_id: ctx.userId }).count({ n: '*' });
        if (Number(n) >= RELAY_LIMITS.maxPerAccount) throw new ConflictError(`An account may have at most ${RELAY_LIMITS.maxPerAccount} relays; delete one first.`);
        const created = await insertId(trx, 'relays', { ...values, user_id: ctx.userId, failures: 0, created_at: now, updated_at: now });
        await recordAudit(trx, ctx, { action: 'relay.created', recordType: 'relay', recordId: created, summary: relaySummary(values) }, now);
        return created;
      });
      return relayRecord(await find(ctx, id));
    },

    /** Changes a relay; without a new password or api_key the stored one stays. Its health starts afresh. */
    async update(ctx: Ctx, id: number, input: RelayInput): Promise<RelayRecord> {
      const previous = await find(ctx, id);
      const values = await columns(input, previous);
      await db.transaction(async (trx) => {
        await trx('relays').where({ user_id: ctx.userId, id }).update({ ...values, failures: 0, down_until: null, updated_at: nowValue() });
        await recordAudit(trx, ctx, { action: 'relay.updated', recordType: 'relay', recordId: id, summary: relaySummary(values) });
      });
      return relayRecord(await find(ctx, id));
    },

    /** Deletes relays; the ledger keeps which relay sent what (the id). */
    async remove(ctx: Ctx, ids: number[]): Promise<void> {
      await db.transaction(async (trx) => {
        const rows = await trx('relays').where({ user_id: ctx.userId }).whereIn('id', ids).select('id', 'name');
        if (!rows.length) throw new NotFoundError();
        const found = rows.map((r) => Number(r.id));
        await trx('single_sends').where({ user_id: ctx.userId }).whereIn('relay_id', found).update({ relay_id: null });
        await trx('automation_schedules').where({ user_id: ctx.userId }).whereIn('relay_id', found).update({ relay_id: null });
        await trx('relays').whereIn('id', found).delete();
        await recordAudit(trx, ctx, rows.map((r) => ({ action: 'relay.deleted' as const, recordType: 'relay', recordId: Number(r.id), summary: String(r.name ?? '') })));
      });
    },

    /** Connects and authenticates (SMTP login, or an API call that sends nothing); answers whether it worked and why not. */
    async test(ctx: Ctx, id: number): Promise<{ ok: boolean; error: string | null }> {
      const row = await find(ctx, id);
      const transport = createRelayTransport(relaySettings(row, appSecret), { allowPrivate: config.relayAllowPrivate });
      let result: { ok: boolean; error: string | null };
      try {
        await transport.verify();
        result = { ok: true, error: null };
      } catch (err) {
        result = { ok: false, error: classifyRelayError(row.kind, err).message };
      } finally {
        transport.close();
      }
      const now = nowValue();
      await db('relays').where({ id: row.id }).update({ tested_at: now, test_ok: result.ok ? 1 : 0, ...(result.error ? { last_error: result.error.slice(0, 500), last_error_at: now } : {}) });
      return result;
    },

    /**
     * How much each relay of the account is used, in one round trip: messages sent in the last
     * hour (the dashboard's rate), and whether it ever handed a message over (proven working
     * without a test).
     */
    async usage(ctx: Ctx, now = new Date()): Promise<Map<number, { sentLastHour: number; used: boolean }>> {
      const since = new Date(now.getTime() - 3_600_000).toISOString();
      const ofRelay = () => db('send_messages as m').whereRaw('m.relay_id = r.id');
      const rows: Array<{ id: unknown; n: unknown; used: unknown }> = await db('relays as r')
        .where('r.user_id', ctx.userId)
        .select('r.id', ofRelay().where('m.sent_at', '>=', since).count('*').as('n'), ofRelay().whereNotNull('m.sent_at').select(db.raw('1')).limit(1).as('used'));
      return new Map(rows.map((r) => [Number(r.id), { sentLastHour: Number(r.n), used: r.used !== null && r.used !== undefined }]));
    },

    /**
     * The relay mail from `fromEmail` goes through first, chosen as the worker chooses: the one
     * named by the send or step, then the account's relays serving the From domain by priority,
     * skipping those down now. `relay` null: the instance's own server (no relay serves the
     * domain). `allDown`: every serving relay is down now, so the mail waits for one.
     */
    async routeOf(ctx: Ctx, fromEmail: string, pinned: number | null): Promise<{ relay: RelayRecord | null; allDown: boolean }> {
      const domain = fromEmail.slice(fromEmail.lastIndexOf('@') + 1).trim().toLowerCase();
      const rows = (await db('relays').where({ user_id: ctx.userId }).orderBy('priority', 'desc').orderBy('id')).map((row) => relayRecord(row));
      const serving = rows.filter((r) => r.id === pinned || servesDomain(r.domains, domain));
      const ordered = [...serving.filter((r) => r.id === pinned), ...serving.filter((r) => r.id !== pinned)];
      if (!ordered.length) return { relay: null, allDown: false };
      const up = ordered.find((r) => r.health === 'up');
      return { relay: up ?? ordered[0], allDown: !up };
    },

    /** A relay named by a send or step must be the account's (a 422 on `relay_id` otherwise). */
    async checkOwned(ctx: Ctx, id: number | null, trx: Knex = db): Promise<void> {
      if (id === null) return;
      const row = await trx('relays').where({ id, user_id: ctx.userId }).first('id');
      if (!row) throw ValidationError.of('relay_id', messages.selected('relay_id'));
    },
  };
}

export type RelaysService = ReturnType<typeof createRelaysService>;
