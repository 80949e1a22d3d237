/**
 * What kind of refusal a bounce is, read from its enhanced status code (RFC 3463) and its text:
 * - `hard`: the address or its domain does not exist (5.1.x);
 * - `mailbox_full`: the mailbox is over its quota (5.2.2, 4.2.2);
 * - `policy`: refused for the sender's authentication, reputation or the receiver's limits
 *   (5.7.x, 4.7.x): not the address's fault, never a reason to suppress it;
 * - `soft`: any other temporary refusal (4.x.x);
 * - `other`: anything else (a permanent refusal that names no reason the codes tell).
 */
export const BOUNCE_CLASSES = ['hard', 'mailbox_full', 'policy', 'soft', 'other'] as const;
export type BounceClass = (typeof BOUNCE_CLASSES)[number];

const ENHANCED = /\b([245])\.(\d{1,3})\.(\d{1,3})\b/;
const BASIC = /\b([45])[0-5]\d(?=[ -]|$)/;

// The words mail systems use when they give no enhanced code (or only x.0.0).
const NO_SUCH_ADDRESS = /\b(user unknown|unknown user|no such (user|mailbox|recipient)|does not exist|doesn't exist|doesn't have an? [\w.-]+ account|recipient not found|mailbox unavailable|address rejected|invalid (recipient|mailbox|address)|host not found|domain not found)\b/i;
const FULL = /\b(mailbox (is )?full|over (the )?quota|quota exceeded|insufficient (storage|space))\b/i;

/**
 * The class of one refusal. `status` is the enhanced code when the reader found one (a DSN's
 * Status field); otherwise the first one in `text` is used, then its basic reply code.
 */
export function bounceClass(status: string | null | undefined, text = ''): BounceClass {
  const enhanced = ENHANCED.exec(status ?? '') ?? ENHANCED.exec(text);
  const klass = enhanced?.[1] ?? BASIC.exec(text)?.[1] ?? BASIC.exec(status ?? '')?.[1];
  const subject = enhanced ? Number(enhanced[2]) : undefined;
  const detail = enhanced ? Number(enhanced[3]) : undefined;
  if (subject === 7) return 'policy';
  if (subject === 2 && detail === 2) return 'mailbox_full';
  if (klass === '5' && subject === 1) return 'hard';
  // x.0.0 or no enhanced code at all: the text decides.
  if (!subject) {
    if (FULL.test(text)) return 'mailbox_full';
    if (klass === '5' && NO_SUCH_ADDRESS.test(text)) return 'hard';
  }
  if (klass === '4') return 'soft';
  return 'other';
}

/** The class of a query value (`bounce_class=`), or undefined. */
export function isBounceClass(value: unknown): value is BounceClass {
  return typeof value === 'string' && (BOUNCE_CLASSES as readonly string[]).includes(value);
}
