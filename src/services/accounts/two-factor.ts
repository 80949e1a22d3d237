import type { Knex } from 'knex';
import { nowValue } from '../../db/dialect';
import { TWO_FACTOR } from '../../lib/constants';
import { hmac, openSecret, randomToken, safeEqual, sealSecret, sha256 } from '../../lib/crypto';
import { ConflictError, ValidationError } from '../../lib/errors';
import { lazy } from '../../lib/lazy';
import type { Ctx, ServiceDeps } from '../context';
import { recordAudit } from '../shared/audit-writer';
import { endOtherSessions } from './sessions';

// Loaded on first use: workers never sign anyone in.
const otplib = lazy(() => require('otplib') as typeof import('otplib'));
const qrcode = lazy(() => require('qrcode') as typeof import('qrcode'));

/** The purpose TOTP secrets are sealed under (src/lib/crypto.ts). */
const TOTP_PURPOSE = 'totp-secret';

/** What the enrolment page shows: the QR code (SVG markup, no script) and the secret to type instead. */
export interface TwoFactorSetup {
  secret: string;
  uri: string;
  qrSvg: string;
}

/** A person's two-factor state as their profile shows it. */
export interface TwoFactorStatus {
  enabled: boolean;
  recoveryCodesLeft: number;
}

/** Which way a second step was passed. */
export type SecondFactor = 'code' | 'recovery_code';

/** `xxxxx-xxxxx`: easy to read out and type; stored as the SHA-256 of its letters without the dash. */
function newRecoveryCode(): string {
  const raw = randomToken(16).replace(/[^a-z0-9]/gi, '').toLowerCase().padEnd(10, '0').slice(0, 10);
  return `${raw.slice(0, 5)}-${raw.slice(5)}`;
}

const normaliseRecovery = (code: string) => code.trim().toLowerCase().replace(/[\s-]/g, '');
const recoveryHash = (code: string) => sha256(`recovery:${normaliseRecovery(code)}`);

/**
 * TOTP two-factor sign-in of team users (RFC 6238 through otplib): enrolment with a QR code and
 * ten one-time recovery codes, the check of the second step, and the account's requirement.
 * Secrets are sealed with the app secret; recovery codes are kept as hashes only; a code's time
 * step is remembered, so the same code does not open a second session.
 */
export function createTwoFactorService({ db, secret: appSecret, config }: Pick<ServiceDeps, 'db' | 'secret' | 'config'>) {
  const issuer = () => new URL(config.baseUrl).hostname || 'Campaigns';

  async function checkCode(sealed: string, code: string, afterStep: number | null): Promise<number | undefined> {
    const token = code.replace(/\s/g, '');
    if (!/^\d{6}$/.test(token)) return undefined;
    const result = await otplib().verify({
      secret: openSecret(appSecret, TOTP_PURPOSE, sealed),
      token,
      // One step either side: a phone clock a little off still works.
      epochTolerance: TWO_FACTOR.toleranceSeconds,
      ...(afterStep === null ? {} : { afterTimeStep: afterStep }),
    });
    return result.valid && 'timeStep' in result ? result.timeStep : undefined;
  }

  async function writeRecoveryCodes(trx: Knex.Transaction, memberId: number): Promise<string[]> {
    const codes = Array.from({ length: TWO_FACTOR.recoveryCodes }, newRecoveryCode);
    const now = nowValue();
    await trx('team_user_recovery_codes').where({ team_user_id: memberId }).delete();
    await trx('team_user_recovery_codes').insert(codes.map((c) => ({ team_user_id: memberId, code_hash: recoveryHash(c), created_at: now })));
    return codes;
  }

  const pendingMac = (memberId: number, until: number) => hmac(appSecret, `two-factor-pending:${memberId}.${until}`);

  return {
    /** What the browser holds between the password and the code: the person and a deadline, signed. */
    pendingToken(memberId: number, now = Date.now()): string {
      const until = now + TWO_FACTOR.pendingMs;
      return `${memberId}.${until}.${pendingMac(memberId, until)}`;
    },

    /** The person of a pending token still in time, or undefined. */
    pendingMember(token: string | undefined, now = Date.now()): number | undefined {
      const match = /^(\d{1,12})\.(\d{1,15})\.([\w-]+)$/.exec(token ?? '');
      if (!match) return undefined;
      const [memberId, until] = [Number(match[1]), Number(match[2])];
      if (until < now || !safeEqual(match[3], pendingMac(memberId, until))) return undefined;
      return memberId;
    },

    async status(memberId: number): Promise<TwoFactorStatus> {
      const row = await db('team_users').where({ id: memberId }).first('totp_enabled_at');
      if (!row?.totp_enabled_at) return { enabled: false, recoveryCodesLeft: 0 };
      const left = await db('team_user_recovery_codes').where({ team_user_id: memberId }).whereNull('used_at').count({ n: '*' }).first();
      return { enabled: true, recoveryCodesLeft: Number(left?.n ?? 0) };
    },

    /** Whether the person must pass a second step after their password. */
    async enabledFor(memberId: number): Promise<boolean> {
      const row = await db('team_users').where({ id: memberId }).first('totp_enabled_at');
      return Boolean(row?.totp_enabled_at);
    },

    /**
     * A new secret for the person's authenticator app, kept pending until a first code confirms
     * it; with `ctx`, the audit log says the setup began (a new secret replaces any pending one).
     */
    async begin(memberId: number, label: string, ctx?: Ctx): Promise<TwoFactorSetup> {
      const row = await db('team_users').where({ id: memberId }).first('totp_enabled_at');
      if (row?.totp_enabled_at) throw new ConflictError('Two-step sign-in is already on.');
      const secret = otplib().generateSecret();
      await db.transaction(async (trx) => {
        await trx('team_users').where({ id: memberId }).update({ totp_pending_sealed: sealSecret(appSecret, TOTP_PURPOSE, secret), updated_at: nowValue() });
        if (ctx) await recordAudit(trx, ctx, { action: 'user.updated', recordType: 'user', recordId: memberId, summary: 'Began setting up two-step sign-in' });
      });
      return this.setupOf(secret, label);
    },

    /** The QR code and address of a pending secret (the page shown again after a wrong code). */
    async pending(memberId: number, label: string): Promise<TwoFactorSetup | undefined> {
      const row = await db('team_users').where({ id: memberId }).first('totp_pending_sealed', 'totp_enabled_at');
      if (!row?.totp_pending_sealed || row.totp_enabled_at) return undefined;
      return this.setupOf(openSecret(appSecret, TOTP_PURPOSE, String(row.totp_pending_sealed)), label);
    },

    async setupOf(secret: string, label: string): Promise<TwoFactorSetup> {
      const uri = otplib().generateURI({ issuer: issuer(), label, secret });
      const qrSvg = await qrcode().toString(uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
      return { secret, uri, qrSvg };
    },

    /**
     * Turns two-step sign-in on when `code` is right for the pending secret; answers the ten
     * recovery codes, shown once. Every other session of the person ends with it: one opened
     * with the password alone (a stolen one, say) must not outlive the second step. The session
     * of `keepSession`, which has just given a right code, stays.
     */
    async confirm(ctx: Ctx, memberId: number, code: unknown, keepSession: string): Promise<string[]> {
      const row = await db('team_users').where({ id: memberId }).first('totp_pending_sealed', 'totp_enabled_at');
      if (row?.totp_enabled_at) throw new ConflictError('Two-step sign-in is already on.');
      if (!row?.totp_pending_sealed) throw ValidationError.of('code', 'Start again: scan the new code first.');
      const step = typeof code === 'string' ? await checkCode(String(row.totp_pending_sealed), code, null) : undefined;
      if (step === undefined) throw ValidationError.of('code', 'The code is not right. Enter the six digits your app shows now.');
      return db.transaction(async (trx) => {
        const now = nowValue();
        const changed = await trx('team_users')
          .where({ id: memberId, totp_pending_sealed: row.totp_pending_sealed })
          .whereNull('totp_enabled_at')
          .update({ totp_secret_sealed: row.totp_pending_sealed, totp_pending_sealed: null, totp_enabled_at: now, totp_last_step: step, updated_at: now });
        if (!changed) throw new ConflictError('Two-step sign-in is already on.');
        await endOtherSessions(trx, memberId, keepSession);
        const codes = await writeRecoveryCodes(trx, memberId);
        await recordAudit(trx, ctx, { action: 'user.two_factor_enabled', recordType: 'user', recordId: memberId, summary: 'Other browsers were signed out' }, now);
        return codes;
      });
    },

    /** Turns it off, given a current code or a recovery code (the account may still require it). */
    async disable(ctx: Ctx, memberId: number, code: unknown): Promise<void> {
      if ((await this.verify(memberId, code)) === false) throw ValidationError.of('code', 'The code is not right.');
      await db.transaction(async (trx) => {
        await trx('team_users').where({ id: memberId }).update({ totp_secret_sealed: null, totp_pending_sealed: null, totp_enabled_at: null, totp_last_step: null, updated_at: nowValue() });
        await trx('team_user_recovery_codes').where({ team_user_id: memberId }).delete();
        await recordAudit(trx, ctx, { action: 'user.two_factor_disabled', recordType: 'user', recordId: memberId });
      });
    },

    /**
     * The second step: a code of the person's app not used before, or one of their recovery
     * codes not used before (then used up). Answers which, or false.
     */
    async verify(memberId: number, code: unknown): Promise<SecondFactor | false> {
      if (typeof code !== 'string' || !code.trim() || code.length > 64) return false;
      const row = await db('team_users').where({ id: memberId }).first('totp_secret_sealed', 'totp_last_step', 'totp_enabled_at');
      if (!row?.totp_enabled_at || !row.totp_secret_sealed) return false;
      const last = row.totp_last_step === null ? null : Number(row.totp_last_step);
      const step = await checkCode(String(row.totp_secret_sealed), code, last);
      if (step !== undefined) {
        // Guarded by the last step: two requests with one code, only one passes.
        const moved = await db('team_users')
          .where({ id: memberId })
          .where((q) => (last === null ? q.whereNull('totp_last_step') : q.where('totp_last_step', last)))
          .update({ totp_last_step: step });
        return moved ? 'code' : false;
      }
      if (normaliseRecovery(code).length !== 10) return false;
      const used = await db('team_user_recovery_codes')
        .where({ team_user_id: memberId, code_hash: recoveryHash(code) })
        .whereNull('used_at')
        .update({ used_at: nowValue() });
      return used ? 'recovery_code' : false;
    },

    /** New recovery codes (the old ones stop working), given a current code. */
    async renewRecoveryCodes(memberId: number, code: unknown): Promise<string[]> {
      if ((await this.verify(memberId, code)) === false) throw ValidationError.of('code', 'The code is not right.');
      return db.transaction((trx) => writeRecoveryCodes(trx, memberId));
    },

    async required(accountId: number): Promise<boolean> {
      const row = await db('accounts').where({ id: accountId }).first('two_factor_required');
      return Number(row?.two_factor_required) === 1;
    },

    /** The account's requirement; only the owner or an admin changes it (the permission table lets no one else reach the settings). */
    async setRequired(ctx: Ctx, required: boolean): Promise<void> {
      if (ctx.actor && !['owner', 'admin'].includes(ctx.actor.role)) throw new ConflictError('Only the owner or an admin can change this.');
      await db.transaction(async (trx) => {
        const changed = await trx('accounts').where({ id: ctx.userId }).whereNot('two_factor_required', required ? 1 : 0).update({ two_factor_required: required ? 1 : 0, updated_at: nowValue() });
        if (changed) {
          await recordAudit(trx, ctx, { action: 'account.settings_changed', recordType: 'account', recordId: ctx.userId, summary: required ? 'Two-step sign-in required for everyone' : 'Two-step sign-in no longer required' });
        }
      });
    },
  };
}

export type TwoFactorService = ReturnType<typeof createTwoFactorService>;
