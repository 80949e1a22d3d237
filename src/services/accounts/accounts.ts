import type { Knex } from 'knex';
import { insertId, nowValue } from '../../db/dialect';
import { emailKey } from '../../lib/email-key';
import { FIRST_CONTACT_TYPE, LIMITS, PASSWORD_MIN } from '../../lib/constants';
import { hashPassword, randomToken, safeEqual, sha256, verifyPassword } from '../../lib/crypto';
import { FieldErrors, ForbiddenError, ValidationError } from '../../lib/errors';
import { currentTimeZone } from '../../lib/time-zones';
import { isEmail, messages, throwIfAny, toFlag } from '../../lib/validation';
import type { Ctx, ServiceDeps } from '../context';
import { recordAudit } from '../shared/audit-writer';
import { KeyCache } from './key-cache';
import { insertOwner, ORIGINAL_KEY_ACTOR } from './team-identity';
import type { Actor } from '../context';

export interface Account {
  id: number;
  name: string;
  email: string;
  public_key: string;
  time_zone: string;
  /** The public archive's id (made with the account; older accounts get one when first asked). */
  archive_id: string | null;
  /** Defaults of new single sends and automation steps (each can say otherwise). */
  track_opens: 0 | 1;
  track_clicks: 0 | 1;
}

/** The account a key pair opens, and who the pair acts as (its `Actor`, with the pair's role). */
export type KeyHolder = Account & { actor: Actor };

export interface CreatedAccount {
  user_id: number;
  email: string;
  public_key: string;
  secret_key: string;
  /** Present only when the password was generated. */
  password?: string;
}

function publicKey(): string {
  return `pk_${randomToken(18)}`;
}

function secretKey(): string {
  return `sk_${randomToken(30)}`;
}

const ACCOUNT_COLUMNS = ['id', 'name', 'email', 'public_key', 'time_zone', 'track_opens', 'track_clicks'];

export function createAccountsService({ db, config }: Pick<ServiceDeps, 'db' | 'config'>) {
  const keys = new KeyCache<KeyHolder>(config.apiKeyCacheMs);

  async function findKey(publicKeyValue: string): Promise<{ holder: KeyHolder; secretHash: string } | undefined> {
    const original: (Account & { secret_key_hash: string }) | undefined = await db('accounts')
      .where({ public_key: publicKeyValue })
      .whereNull('deleted_at')
      .first([...ACCOUNT_COLUMNS, 'secret_key_hash']);
    if (original) {
      const { secret_key_hash: secretHash, ...account } = original;
      return { holder: { ...(account as Account), actor: ORIGINAL_KEY_ACTOR }, secretHash };
    }
    const row = await db('api_keys')
      .join('accounts', 'accounts.id', 'api_keys.user_id')
      // A key works only while the person responsible for it may act: a disabled maker's keys stop with them.
      .leftJoin('team_users as maker', 'maker.id', 'api_keys.made_by')
      .where('api_keys.public_key', publicKeyValue)
      .whereNull('accounts.deleted_at')
      .where((q) => q.whereNull('maker.status').orWhereNot('maker.status', 'disabled'))
      .first([
        ...ACCOUNT_COLUMNS.map((c) => `accounts.${c}`),
        'api_keys.id as key_id',
        'api_keys.name as key_name',
        'api_keys.role as key_role',
        'api_keys.secret_key_hash',
      ]);
    if (!row) return undefined;
    const { key_id: keyId, key_name: keyName, key_role: keyRole, secret_key_hash: secretHash, ...account } = row;
    return { holder: { ...(account as Account), actor: { type: 'api_key', id: Number(keyId), name: keyName, role: keyRole } }, secretHash };
  }
  return {
    /**
     * `starter`: the account starts with a first contact type ("Subscribers"), as listmonk
     * ships default lists, so a first import or signup form has somewhere to go, and with its
     * owner as its notification recipient, so a pause or a finished import reaches somebody. The CLI and
     * the demo account ask for it; tests build bare accounts.
     */
    async create(input: { email: string; name?: string; password?: string; starter?: boolean }): Promise<CreatedAccount> {
      const email = input.email.trim();
      if (!isEmail(email)) throw ValidationError.of('email', messages.email('email'));
      const key = emailKey(email);
      // The address signs in as the account's owner, so it may not be anyone else's sign-in either.
      if ((await db('accounts').where({ email_key: key }).first('id')) || (await db('team_users').where({ email_key: key }).first('id'))) {
        throw ValidationError.of('email', messages.taken('email'));
      }
      const password = input.password ?? randomToken(12);
      const secret = secretKey();
      const pub = publicKey();
      const now = nowValue();
      const name = input.name?.trim() || email.split('@')[0];
      const passwordHash = await hashPassword(password);
      const id = await db.transaction(async (trx) => {
        const accountId = await insertId(trx, 'accounts', {
          name,
          email,
          email_key: key,
          // Kept as the account was made; sign-in reads the owner's own hash in team_users.
          password_hash: passwordHash,
          public_key: pub,
          archive_id: randomToken(12),
          secret_key_hash: sha256(secret),
          created_at: now,
          updated_at: now,
        });
        await insertOwner(trx, { id: accountId, email, email_key: key, name, password_hash: passwordHash });
        if (input.starter) {
          await trx('contact_types').insert({ user_id: accountId, name: FIRST_CONTACT_TYPE, created_at: now, updated_at: now });
          // Somebody is told when a send pauses or an import ends: the owner, until they choose others.
          await trx('notification_recipients').insert({ user_id: accountId, email_address: email, email_key: key, email_owner: name, created_at: now, updated_at: now });
        }
        return accountId;
      });
      return { user_id: id, email, public_key: pub, secret_key: secret, ...(input.password ? {} : { password }) };
    },

    /**
     * The live account a key pair opens, with who the pair acts as: the account's original pair
     * (on `accounts`) as the owner, any other pair (`api_keys`) with its own role. The secret is
     * compared by hash. A key read from the database has its `last_used_at` moved on, so that
     * time is exact to the key cache's lifetime.
     */
    async authenticate(publicKeyValue: string, secret: string): Promise<KeyHolder | undefined> {
      const cached = keys.get(publicKeyValue);
      if (cached) return safeEqual(cached.secretHash, sha256(secret)) ? cached.account : undefined;
      const found = await findKey(publicKeyValue);
      if (!found) return undefined;
      const { holder, secretHash } = found;
      const ok = safeEqual(secretHash, sha256(secret));
      keys.set(publicKeyValue, holder, secretHash);
      if (ok && holder.actor.id !== null) await db('api_keys').where({ id: holder.actor.id }).update({ last_used_at: nowValue() });
      return ok ? holder : undefined;
    },

    /** Forgets a key pair this process may have cached (it was deleted). */
    forgetKey(publicKeyValue: string): void {
      keys.forget(publicKeyValue);
    },

    async get(id: number): Promise<Account | undefined> {
      return db('accounts').where({ id }).whereNull('deleted_at').first(ACCOUNT_COLUMNS);
    },

    /**
     * Replaces the secret key of the original pair; the new one is returned once and stored only
     * hashed. The pair acts as the owner, so only the owner may have it: anyone else would be
     * shown a key above their role.
     */
    async rotateSecret(ctx: Ctx): Promise<string> {
      if ((ctx.actor?.role ?? 'owner') !== 'owner') throw new ForbiddenError();
      const secret = secretKey();
      const now = nowValue();
      await db.transaction(async (trx) => {
        await trx('accounts').where({ id: ctx.userId }).update({ secret_key_hash: sha256(secret), updated_at: now });
        await recordAudit(trx, ctx, { action: 'api_key.created', recordType: 'api_key', summary: 'New secret key for the account\'s original key pair' }, now);
      });
      keys.forgetAccount(ctx.userId);
      return secret;
    },

    /**
     * The account's display name, the time zone its schedules are read in, and whether new
     * sends track opens and clicks (a switch not given stays as it is).
     */
    async updateSettings(id: number, input: { name: unknown; time_zone: unknown; track_opens?: unknown; track_clicks?: unknown }): Promise<void> {
      const name = typeof input.name === 'string' ? input.name.trim() : '';
      const given = typeof input.time_zone === 'string' ? input.time_zone.trim() : '';
      // Stored under its current name: an alias (Asia/Calcutta) is accepted as Asia/Kolkata.
      const timeZone = currentTimeZone(given);
      const errors: FieldErrors = {};
      if (!name) errors.name = [messages.required('name')];
      else if (name.length > LIMITS.string) errors.name = [messages.max('name', LIMITS.string)];
      if (!given) errors.time_zone = [messages.required('time_zone')];
      else if (!timeZone) errors.time_zone = [messages.selected('time_zone')];
      const switches: Record<string, 0 | 1> = {};
      for (const flag of ['track_opens', 'track_clicks'] as const) {
        if (input[flag] === undefined) continue;
        const value = toFlag(input[flag]);
        if (value === undefined) errors[flag] = [messages.boolean(flag)];
        else switches[flag] = value;
      }
      throwIfAny(errors);
      await db('accounts').where({ id }).update({ name, time_zone: timeZone, ...switches, updated_at: nowValue() });
      keys.forgetAccount(id);
    },

    async count(trx: Knex = db): Promise<number> {
      const row = await trx('accounts').count({ n: '*' }).first();
      return Number(row?.n ?? 0);
    },
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;
