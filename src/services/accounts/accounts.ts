import type { Knex } from 'knex';
import { insertId, nowValue } from '../../db/dialect';
import { emailKey } from '../../lib/email-key';
import { FIRST_CONTACT_TYPE, LIMITS, PASSWORD_MIN } from '../../lib/constants';
import { hashPassword, randomToken, safeEqual, sha256, verifyPassword } from '../../lib/crypto';
import { FieldErrors, ValidationError } from '../../lib/errors';
import { currentTimeZone } from '../../lib/time-zones';
import { isEmail, messages, throwIfAny, toFlag } from '../../lib/validation';
import type { ServiceDeps } from '../context';
import { KeyCache } from './key-cache';

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
  const keys = new KeyCache<Account>(config.apiKeyCacheMs);
  return {
    /**
     * `starter`: the account starts with a first contact type ("Subscribers"), as listmonk
     * ships default lists, so a first import or signup form has somewhere to go. The CLI and
     * the demo account ask for it; tests build bare accounts.
     */
    async create(input: { email: string; name?: string; password?: string; starter?: boolean }): Promise<CreatedAccount> {
      const email = input.email.trim();
      if (!isEmail(email)) throw ValidationError.of('email', messages.email('email'));
      const key = emailKey(email);
      if (await db('accounts').where({ email_key: key }).first()) {
        throw ValidationError.of('email', messages.taken('email'));
      }
      const password = input.password ?? randomToken(12);
      const secret = secretKey();
      const pub = publicKey();
      const now = nowValue();
      const id = await insertId(db, 'accounts', {
        name: input.name?.trim() || email.split('@')[0],
        email,
        email_key: key,
        password_hash: await hashPassword(password),
        public_key: pub,
        archive_id: randomToken(12),
        secret_key_hash: sha256(secret),
        created_at: now,
        updated_at: now,
      });
      if (input.starter) await db('contact_types').insert({ user_id: id, name: FIRST_CONTACT_TYPE, created_at: now, updated_at: now });
      return { user_id: id, email, public_key: pub, secret_key: secret, ...(input.password ? {} : { password }) };
    },

    /** The live account owning this key pair, or undefined. The secret is compared by hash. */
    async authenticate(publicKeyValue: string, secret: string): Promise<Account | undefined> {
      const cached = keys.get(publicKeyValue);
      if (cached) return safeEqual(cached.secretHash, sha256(secret)) ? cached.account : undefined;
      const row: (Account & { secret_key_hash: string }) | undefined = await db('accounts')
        .where({ public_key: publicKeyValue })
        .whereNull('deleted_at')
        .first([...ACCOUNT_COLUMNS, 'secret_key_hash']);
      if (!row) return undefined;
      const { secret_key_hash: secretHash, ...account } = row;
      keys.set(publicKeyValue, account as Account, secretHash);
      return safeEqual(secretHash, sha256(secret)) ? (account as Account) : undefined;
    },

    /** Email and password sign-in for the dashboard. */
    async signIn(email: string, password: string): Promise<Account | undefined> {
      const row = await db('accounts')
        .where({ email_key: emailKey(email) })
        .whereNull('deleted_at')
        .first([...ACCOUNT_COLUMNS, 'password_hash']);
      // Hash even when the account does not exist, so timing does not reveal it.
      const ok = await verifyPassword(password, row?.password_hash ?? 'scrypt$32768$8$1$AAAA$AAAA');
      if (!row || !ok) return undefined;
      delete row.password_hash;
      return row as Account;
    },

    async get(id: number): Promise<Account | undefined> {
      return db('accounts').where({ id }).whereNull('deleted_at').first(ACCOUNT_COLUMNS);
    },

    /** Replaces the secret key; the new one is returned once and stored only hashed. */
    async rotateSecret(id: number): Promise<string> {
      const secret = secretKey();
      await db('accounts').where({ id }).update({ secret_key_hash: sha256(secret), updated_at: nowValue() });
      keys.forgetAccount(id);
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

    /**
     * A new password for the dashboard, given the current one. The caller signs the account's
     * other sessions out.
     */
    async changePassword(id: number, input: { current_password: unknown; password: unknown; password_confirmation: unknown }): Promise<void> {
      const text = (value: unknown) => (typeof value === 'string' ? value : '');
      const [current, next, confirmation] = [text(input.current_password), text(input.password), text(input.password_confirmation)];
      const errors: FieldErrors = {};
      if (!current) errors.current_password = [messages.required('current_password')];
      if (!next) errors.password = [messages.required('password')];
      else if (next.length < PASSWORD_MIN) errors.password = [messages.min('password', PASSWORD_MIN)];
      else if (next.length > LIMITS.string) errors.password = [messages.max('password', LIMITS.string)];
      else if (next !== confirmation) errors.password_confirmation = ['The password confirmation does not match.'];
      throwIfAny(errors);
      const row = await db('accounts').where({ id }).whereNull('deleted_at').first('password_hash');
      if (!row || !(await verifyPassword(current, row.password_hash))) {
        throw ValidationError.of('current_password', 'The current password is incorrect.');
      }
      await db('accounts').where({ id }).update({ password_hash: await hashPassword(next), updated_at: nowValue() });
    },

    async count(trx: Knex = db): Promise<number> {
      const row = await trx('accounts').count({ n: '*' }).first();
      return Number(row?.n ?? 0);
    },
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;
