import { LIMITS } from '../../lib/constants';
import { formatRecipientRef, parseRecipientRef, type RecipientRef } from '../shared/recipient-ref';
import { asArray } from '../../lib/http';
import { messages } from '../../lib/validation';
import type { ContactTypesService } from '../audience/contact-types';
import type { Ctx, ServiceDeps } from '../context';
import type { SegmentsService } from '../audience/segments';
import type { DesignTemplatesService } from './design-templates';
import type { SenderRecord, SendersService } from './senders';
import type { UnsubscribeGroupsService } from '../audience/unsubscribe-groups';

/**
 * The references single sends and automations make to other records of the account:
 * design templates, senders, unsubscribe groups and recipients (`contacts_{contact_type_id}`
 * or `segments_{segment_id}`). Each check answers with the reference's field message.
 */

export { formatRecipientRef, parseRecipientRef, type RecipientRef, type RecipientTable } from '../shared/recipient-ref';

/** The entries of a recipient list (array or single value), split on commas too: `contacts_1,segments_2`. */
export function recipientEntries(value: unknown): unknown[] {
  return asArray(value).flatMap((v) => (typeof v === 'string' ? v.split(',').map((e) => e.trim()).filter((e) => e !== '') : [v]));
}

/** Parses entries already checked for format, dropping repeats. */
export function parseRecipientRefs(entries: unknown[]): RecipientRef[] {
  const seen = new Set<string>();
  const refs: RecipientRef[] = [];
  for (const entry of entries) {
    const ref = parseRecipientRef(entry);
    if (!ref || seen.has(formatRecipientRef(ref))) continue;
    seen.add(formatRecipientRef(ref));
    refs.push(ref);
  }
  return refs;
}

interface RefDeps extends Pick<ServiceDeps, 'db'> {
  contactTypes: Pick<ContactTypesService, 'exists'>;
  unsubscribeGroups: Pick<UnsubscribeGroupsService, 'exists'>;
  senders: Pick<SendersService, 'find'>;
  designTemplates: Pick<DesignTemplatesService, 'exists' | 'list'>;
  segments: Pick<SegmentsService, 'exists'>;
}

export function createCampaignRefs({ contactTypes, unsubscribeGroups, senders, designTemplates, segments }: RefDeps) {
  async function recipientExists(ctx: Ctx, ref: RecipientRef): Promise<boolean> {
    // An id past the id columns' range names nothing (and PostgreSQL would fail on it).
    if (Number(ref.id) > LIMITS.maxId) return false;
    return ref.table === 'contacts_' ? contactTypes.exists(ctx, Number(ref.id)) : segments.exists(ctx, Number(ref.id));
  }

  return {
    /** A seeded design template (shared by every account). */
    async templateError(id: number): Promise<string | undefined> {
      return (await designTemplates.exists(id)) ? undefined : messages.selected('template_id');
    },

    /** The template's preview image names (`welcome.png`), which `preview_img` must be one of. */
    async previewImages(): Promise<Set<string>> {
      return new Set((await designTemplates.list()).rows.map((template) => template.preview_image));
    },

    async groupError(ctx: Ctx, id: number, field = 'unsubscribe_group_id'): Promise<string | undefined> {
      return (await unsubscribeGroups.exists(ctx, id)) ? undefined : messages.selected(field);
    },

    /** A live sender of the account; `verified` also requires is_verified 1. */
    async sender(ctx: Ctx, id: number, verified: boolean): Promise<{ sender?: SenderRecord; error?: string }> {
      const sender = await senders.find(ctx, id);
      if (!sender) return { error: messages.selected('sender_id') };
      if (verified && !sender.is_verified) {
        return { error: 'The selected sender id is not verified yet; open the link in its verification mail first.' };
      }
      return { sender };
    },

    /** The first reference of the list that is not a live contact type or segment of the account. */
    async recipientsError(ctx: Ctx, refs: RecipientRef[], field: string): Promise<string | undefined> {
      for (const ref of refs) {
        if (!(await recipientExists(ctx, ref))) return messages.selected(field);
      }
      return undefined;
    },
  };
}

export type CampaignRefs = ReturnType<typeof createCampaignRefs>;
