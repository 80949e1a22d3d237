import { parseJson } from '../../../db/dialect';
import { parseRecipientRef } from '../../shared/recipient-ref';

/**
 * The targets of a send as stored in `recipient_id` / `exclude_specific_recipient_id`:
 * `[{ id, table }]` with table `contacts_` (a contact type) or `segments_` (a segment),
 * read with the campaign API's own reference parser.
 */
export interface Targets {
  contactTypeIds: number[];
  segmentIds: number[];
}

export function parseTargets(value: unknown): Targets {
  const stored = parseJson<Array<{ id?: unknown; table?: unknown }>>(value, []);
  const targets: Targets = { contactTypeIds: [], segmentIds: [] };
  for (const entry of Array.isArray(stored) ? stored : []) {
    const ref = parseRecipientRef(`${String(entry?.table)}${String(entry?.id)}`);
    if (ref?.table === 'contacts_') targets.contactTypeIds.push(Number(ref.id));
    else if (ref?.table === 'segments_') targets.segmentIds.push(Number(ref.id));
  }
  return targets;
}
