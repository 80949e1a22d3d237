import type { Knex } from 'knex';
import { insertId, nowValue } from '../../db/dialect';
import { listPage, Paging } from '../../db/paging';
import { TEAM_ROLES, TeamRole } from '../../lib/constants';
import { randomToken, sha256 } from '../../lib/crypto';
import { NotFoundError, ValidationError } from '../../lib/errors';
import { timestamp } from '../../lib/time';
import { messages } from '../../lib/validation';
import type { Ctx, ServiceDeps } from '../context';
import type { AccountsService } from './accounts';
import { recordAudit } from '../shared/audit-writer';

/** A key pair of the account beyond its original one, as `GET /api-keys` lists it (never its secret). */
export interface ApiKeyRecord {
  id: number;
  name: string;
  role: TeamRole;
  public_key: string;
  last_used_at: string | null;
  created_at: string;
  /** Who made it: the person responsible for it, or the original key; null when not recorded. */
  made_by: { id: number | null; name: string } | null;
}

/** A new key pair: the only answer that carries its secret. */
export interface CreatedApiKey extends ApiKeyRecord {
  secret_key: string;
}

function apiKeyRecord(row: Record<string, unknown>): ApiKeyRecord {
  return {
    id: Number(row.id),
    name: String(row.name),
    role: row.role as TeamRole,
    public_key: String(row.public_key),
    last_used_at: timestamp(row.last_used_at),
    created_at: timestamp(row.created_at) as string,
    made_by: row.made_by_name === null || row.made_by_name === undefined ? null : { id: row.made_by === null || row.made_by === undefined ? null : Number(row.made_by), name: String(row.made_by_name) },
  };
}

/** Nobody makes a key that could do more than they can: a role ranks below or equal to the maker's. */
function outranks(role: TeamRole, maker: TeamRole): boolean {
  return TEAM_ROLES.indexOf(role) < TEAM_ROLES.indexOf(maker);
}

/**
 * The person responsible for a key `ctx`'s actor makes: the person themself, or the maker of the
 * key they use (so removing a person also ends what their keys made); the original pair has none.
 */
async function makerOf(trx: Knex, ctx: Ctx): Promise<{ made_by: number | null; made_by_name: string | null }> {
  const actor = ctx.actor;
  if (!actor || actor.type === 'system') return { made_by: null, made_by_name: null };
  if (actor.type === 'user') return { made_by: actor.id, made_by_name: actor.name };
  if (actor.id === null) return { made_by: null, made_by_name: actor.name };
  const key = await trx('api_keys').where({ id: actor.id, user_id: ctx.userId }).first('made_by', 'made_by_name');
  return { made_by: key?.made_by ?? null, made_by_name: key?.made_by_name ?? null };
}

/** A person's keys as one line of their audit entry: what their removal or new role did to them. */
function keysLine(names: string[], what: string): string {
  if (!names.length) return '';
  return `; ${names.length === 1 ? '1 API key' : `${names.length} API keys`} ${what} (${names.join(', ')})`.slice(0, 300);
}

/**
 * Deletes the keys a person made (they leave the account): answers their public keys, to forget
 * from the cache after the commit, and the words their removal's audit entry adds.
 */
export async function revokeKeysOf(trx: Knex, accountId: number, teamUserId: number): Promise<{ publicKeys: string[]; summary: string }> {
  const rows: { id: number; public_key: string; name: string }[] = await trx('api_keys').where({ user_id: accountId, made_by: teamUserId }).select('id', 'public_key', 'name');
  if (rows.length) await trx('api_keys').whereIn('id', rows.map((r) => r.id)).delete();
  return { publicKeys: rows.map((r) => r.public_key), summary: keysLine(rows.map((r) => r.name), 'revoked') };
}

/** The public keys a person made: forgotten from the cache when they are disabled, so they stop at once here. */
export async function keysMadeBy(trx: Knex, accountId: number, teamUserId: number): Promise<string[]> {
  const rows: { public_key: string }[] = await trx('api_keys').where({ user_id: accountId, made_by: teamUserId }).select('public_key');
  return rows.map((r) => r.public_key);
}

/** Lowers the keys a person made to their new role, where they rank above it (a key never outranks its maker). */
export async function capKeysOf(trx: Knex, accountId: number, teamUserId: number, role: TeamRole): Promise<{ publicKeys: string[]; summary: string }> {
  const above = TEAM_ROLES.slice(0, TEAM_ROLES.indexOf(role));
  if (!above.length) return { publicKeys: [], summary: '' };
  const rows: { id: number; public_key: string; name: string }[] = await trx('api_keys').where({ user_id: accountId, made_by: teamUserId }).whereIn('role', above).select('id', 'public_key', 'name');
  if (rows.length) await trx('api_keys').whereIn('id', rows.map((r) => r.id)).update({ role, updated_at: nowValue() });
  return { publicKeys: rows.map((r) => r.public_key), summary: keysLine(rows.map((r) => r.name), `lowered to ${role}`) };
}

/** Key pairs with roles; the account's original pair stays on the account and acts as its owner. */
export function createApiKeysService({ db, accounts }: Pick<ServiceDeps, 'db'> & { accounts: AccountsService }) {
  const ofAccount = (ctx: Ctx) => db('api_keys').where({ user_id: ctx.userId });
  return {
    async list(ctx: Ctx, paging?: Paging) {
      return listPage(ofAccount(ctx).select('*').orderBy('id', 'desc'), paging, apiKeyRecord);
    },

    /** A new pair with a role; its secret is returned once and stored only hashed. */
    async create(ctx: Ctx, input: { name: string; role: TeamRole }): Promise<CreatedApiKey> {
      if (outranks(input.role, ctx.actor?.role ?? 'owner')) throw ValidationError.of('role', messages.selected('role'));
      const publicKey = `pk_${randomToken(18)}`;
      const secretKey = `sk_${randomToken(30)}`;
      const now = nowValue();
      const id = await db.transaction(async (trx) => {
        const created = await insertId(trx, 'api_keys', {
          user_id: ctx.userId,
          name: input.name.trim(),
          role: input.role,
          public_key: publicKey,
          secret_key_hash: sha256(secretKey),
          last_used_at: null,
          ...(await makerOf(trx, ctx)),
          created_at: now,
          updated_at: now,
        });
        await recordAudit(trx, ctx, { action: 'api_key.created', recordType: 'api_key', recordId: created, summary: `${input.name.trim()} (${input.role})` }, now);
        return created;
      });
      const row = await db('api_keys').where({ id }).first();
      return { ...apiKeyRecord(row), secret_key: secretKey };
    },

    /** Deletes a pair: this process refuses it at once, others within API_KEY_CACHE_SECONDS. */
    async remove(ctx: Ctx, ids: number[]): Promise<void> {
      const row = await ofAccount(ctx).whereIn('id', ids).first('id', 'public_key', 'name');
      if (!row) throw new NotFoundError();
      await db.transaction(async (trx) => {
        await trx('api_keys').where({ id: row.id }).delete();
        await recordAudit(trx, ctx, { action: 'api_key.deleted', recordType: 'api_key', recordId: Number(row.id), summary: String(row.name) });
      });
      accounts.forgetKey(String(row.public_key));
    },
  };
}

export type ApiKeysService = ReturnType<typeof createApiKeysService>;
