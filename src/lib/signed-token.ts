import { hmac, safeEqual } from './crypto';

/**
 * Tokens in links: a record id and an HMAC of it under the server secret. Unguessable
 * (132 bits of MAC) and self-checking, so a forged or edited token is rejected before any
 * database read. The purpose is part of the MAC, so a token for one use is worthless for another.
 */
export interface Signer {
  sign(purpose: string, id: number): string;
  /** The id, or undefined when the token is malformed, forged or for another purpose. */
  verify(purpose: string, token: string): number | undefined;
}

/** What a token is for; signed into it, so one cannot stand in for another. */
export const TOKEN_PURPOSE = {
  /** The links of one sent message: open pixel, preference page, one-click unsubscribe. */
  message: 'msg',
  /** The Message-ID header (kept apart: replies and forwards carry it to third parties). */
  messageId: 'mid',
  /** The web view of one sent message: a link that shows the message and records nothing. */
  webview: 'web',
} as const;

const TOKEN = /^([0-9a-z]{1,11})\.([\w-]{22})$/;

export function createSigner(secret: string): Signer {
  const mac = (purpose: string, id: number) => hmac(secret, `${purpose}:${id}`).slice(0, 22);
  return {
    sign: (purpose, id) => `${id.toString(36)}.${mac(purpose, id)}`,
    verify(purpose, token) {
      const match = TOKEN.exec(token);
      if (!match) return undefined;
      const id = parseInt(match[1], 36);
      if (!Number.isSafeInteger(id) || id <= 0) return undefined;
      return safeEqual(match[2], mac(purpose, id)) ? id : undefined;
    },
  };
}
