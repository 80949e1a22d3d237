/**
 * The one reading of "refused for the sender's authentication or reputation, not for the
 * address", whoever says it: an SMTP server's answer (the instance's or a relay's), a
 * provider's API error, or a delivery status notification that a smarthost or the receiving
 * side sent back later. Such a refusal never suppresses the address.
 */
const POLICY_CODES = /\b(5\.7\.26|5\.7\.515|4\.7\.32|5\.7\.25|5\.7\.28)\b/;
const POLICY_WORDS = /\b(dmarc|spf|dkim|policy|authenticat\w*|reputation|sender identity|not verified|unverified)\b/i;

/** The enhanced codes that mean it, or 5.7.1 with such wording. */
export function isPolicyRefusal(text: string): boolean {
  if (POLICY_CODES.test(text)) return true;
  return /\b5\.7\.1\b/.test(text) && POLICY_WORDS.test(text);
}
