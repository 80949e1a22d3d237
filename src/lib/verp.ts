import crypto from 'node:crypto';
import { safeEqual } from './crypto';

/**
 * The token that names one ledger message in its VERP envelope sender
 * (`bounces+<token>@BOUNCE_DOMAIN`) and its `X-Campaign-Message` header: the message id in
 * base 36 and 80 bits of HMAC, all lower case (mail systems may fold the case of a local
 * part), at most 32 characters, so the local part stays far below the 64 allowed.
 */
export interface BounceTokens {
  sign(messageId: number): string;
  /** The message id, or undefined when the token is malformed or forged. */
  verify(token: string): number | undefined;
}

export const VERP_PREFIX = 'bounces+';
const TOKEN = /^([0-9a-z]{1,11})-([0-9a-f]{20})$/;

export function createBounceTokens(secret: string): BounceTokens {
  const mac = (id: number) => crypto.createHmac('sha256', secret).update(`verp:${id}`).digest('hex').slice(0, 20);
  return {
    sign: (id) => `${id.toString(36)}-${mac(id)}`,
    verify(token) {
      const match = TOKEN.exec(token.trim().toLowerCase());
      if (!match) return undefined;
      const id = parseInt(match[1], 36);
      if (!Number.isSafeInteger(id) || id <= 0) return undefined;
      return safeEqual(match[2], mac(id)) ? id : undefined;
    },
  };
}

/** `bounces+<token>@domain`. */
export function verpAddress(token: string, domain: string): string {
  return `${VERP_PREFIX}${token}@${domain}`;
}

/** The token of a VERP address at `domain`, or undefined when the address is not one. */
export function verpToken(address: string, domain: string | undefined): string | undefined {
  const at = address.lastIndexOf('@');
  if (at < 0) return undefined;
  const local = address.slice(0, at).toLowerCase();
  const host = address.slice(at + 1).toLowerCase().replace(/\.$/, '');
  if (domain !== undefined && host !== domain.toLowerCase()) return undefined;
  return local.startsWith(VERP_PREFIX) ? local.slice(VERP_PREFIX.length) : undefined;
}

/** The header every message carries; providers echo it back in their events. */
export const MESSAGE_HEADER = 'X-Campaign-Message';
