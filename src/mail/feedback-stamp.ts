import { createBounceTokens, MESSAGE_HEADER, verpAddress } from '../lib/verp';
import type { OutgoingMessage } from './transport';

/**
 * Marks a message so that what comes back about it (a DSN, a complaint, a provider's event)
 * names its ledger row: the `X-Campaign-Message` header always, and with BOUNCE_DOMAIN the VERP
 * envelope sender `bounces+<token>@BOUNCE_DOMAIN` (the From header stays the sender's).
 */
export function feedbackStamp(secret: string, bounceDomain: string | undefined) {
  const tokens = createBounceTokens(secret);
  return (message: OutgoingMessage, ledgerId: number): OutgoingMessage => {
    const token = tokens.sign(ledgerId);
    return {
      ...message,
      headers: { ...message.headers, [MESSAGE_HEADER]: token },
      ...(bounceDomain ? { envelope: { from: verpAddress(token, bounceDomain), to: message.to } } : {}),
    };
  };
}
