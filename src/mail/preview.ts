import type { Knex } from 'knex';
import { MESSAGE_KIND } from '../lib/constants';
import { emailKey } from '../lib/email-key';
import { createSigner, TOKEN_PURPOSE } from '../lib/signed-token';
import type { RenderedMessage } from './render';
import { escapeHtml } from './template';
import { LedgerRow, MessageSources, sourceKey } from './sources';

export interface PreviewTarget {
  userId: number;
  singleSendId: number;
  /** A contact of the account (checked by the caller), or none: placeholders render empty. */
  contact?: { id: number; email: string };
}

/**
 * A single send's message exactly as the worker would build it for one contact: the same
 * sources, personal values and renderer. It is built for a message that does not exist
 * (id 0), so its unsubscribe links answer 404 and record nothing; the open pixel is left out.
 */
export async function previewSingleSend(db: Knex, secret: string, baseUrl: string, target: PreviewTarget): Promise<RenderedMessage | undefined> {
  const email = target.contact?.email ?? '';
  const row: LedgerRow = {
    id: 0,
    kind: MESSAGE_KIND.single,
    user_id: target.userId,
    single_send_id: target.singleSendId,
    automation_id: null,
    automation_schedule_id: null,
    contact_id: target.contact?.id ?? null,
    segment_recipient_id: null,
    email,
    email_key: emailKey(email),
    attempts: 0,
    unconfirmed: 0,
    payload: null,
  };
  const signer = createSigner(secret);
  const sources = new MessageSources(db, signer, baseUrl);
  const { sources: loaded, people } = await sources.prepare([row]);
  const source = loaded.get(sourceKey(row)!);
  if (!source) return undefined;
  const message = sources.build(row, source, people(row));
  // Looking at a preview is not an open: its pixel becomes a blank image (which the frame's CSP allows).
  const pixel = `${baseUrl}/open/${signer.sign(TOKEN_PURPOSE.message, row.id)}.gif`;
  return { subject: message.subject, html: (message.html ?? '').split(escapeHtml(pixel)).join(BLANK_GIF), text: message.text ?? '' };
}

const BLANK_GIF = 'data:image/gif;base64,R0lGODlhAQABAAAAACH5BAEKAAEALAAAAAABAAEAAAICTAEAOw==';
