import { isIP } from 'node:net';
import { sha256 } from '../lib/crypto';

/** What a message belongs to, for its List-Id and Feedback-ID (nothing about its recipient). */
export interface MailStream {
  userId: number;
  kind: 'campaign' | 'automation' | 'system' | 'transactional';
  /** The single send's or automation's id; none for system mail. */
  campaignId?: number;
  /** The unsubscribe group its recipients leave with; null: the account's whole list. */
  groupId?: number | null;
}

/** The namespace of our List-Ids: the instance's host (RFC 2919 §3 keeps `localhost` for one without a domain). */
function namespaceOf(baseUrl: string): string {
  const host = new URL(baseUrl).hostname.toLowerCase();
  return !host || isIP(host.replace(/^\[|\]$/g, '')) ? 'localhost' : host;
}

/**
 * Gmail's Feedback-ID `a:b:c:SenderId`: campaign, account, kind, then an identifier of this
 * instance (5–15 characters, the same on every message). Gmail aggregates complaints per field,
 * so each field has its own prefix and no field ever names a recipient.
 */
export function createListHeaders(baseUrl: string) {
  const namespace = namespaceOf(baseUrl);
  const senderId = `cm${sha256(namespace).slice(0, 10)}`;
  return (stream: MailStream): Record<string, string> => {
    const campaign = stream.campaignId ? `${stream.kind === 'automation' ? 'a' : 's'}${stream.campaignId}` : 'none';
    const feedback = { 'Feedback-ID': `${campaign}:u${stream.userId}:${stream.kind}:${senderId}` };
    // Not a list: no List-Id, so no receiver offers to unsubscribe from a receipt.
    if (stream.kind === 'system' || stream.kind === 'transactional') return feedback;
    const list = stream.groupId ? `g${stream.groupId}` : 'all';
    return { 'List-Id': `<${list}.u${stream.userId}.${namespace}>`, ...feedback };
  };
}
