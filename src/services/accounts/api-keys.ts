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
  };
}

/** Nobody makes a key that could do more than they can: a role ranks below or equal to the maker's. */
function outranks(role: TeamRole, maker: TeamRole): boolean {
  return TEAM_ROLES.indexOf(role) < TEAM_ROLES.indexOf(maker);
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
