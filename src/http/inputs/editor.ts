import { toId } from '../../lib/http';
import { parseRecipientRef, parseRecipientRefs, recipientEntries } from '../../services/campaigns/campaign-refs';
import type { DraftPreviewInput } from '../../services/campaigns/design-editor';
import type { OwnTemplateInput } from '../../services/campaigns/own-templates';
import { templateText } from '../campaign-params';

const text = (value: unknown) => (typeof value === 'string' ? value : '');

/**
 * The editor's live preview reads the form it sits in: the composer's (or the step page's)
 * subject, preheader, sender, body and audience, plus whom to preview for: `preview_contact_id`,
 * else `preview_search` (a name or an address), else the audience's first contact. The step
 * page names its automation's target in `preview_audience`.
 */
export function draftPreviewInput(body: Record<string, unknown>): DraftPreviewInput {
  const refs = recipientEntries(body.recipient_id ?? body.preview_audience).filter((entry) => parseRecipientRef(entry) !== undefined);
  return {
    subject: text(body.subject),
    preheader: text(body.preheader),
    html: text(body.template_html),
    senderId: toId(body.sender_id),
    templateId: toId(body.template_id),
    contactId: body.preview_contact_id === undefined || body.preview_contact_id === '' ? undefined : (toId(body.preview_contact_id) ?? 0),
    search: text(body.preview_search).trim() || undefined,
    audience: parseRecipientRefs(refs),
  };
}

/** "Save as template": a name and the design pair of the form. */
export function ownTemplateInput(body: Record<string, unknown>): OwnTemplateInput {
  return { template_name: text(body.template_name), template_json: templateText(body.template_json), template_html: templateText(body.template_html) };
}
