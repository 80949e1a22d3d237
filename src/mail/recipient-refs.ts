import { parseJson } from '../db/dialect';

/**
 * The targets of a send as stored in `recipient_id` / `exclude_specific_recipient_id`:
 * `[{ id, table }]` with table `contacts_` (a contact type) or `segments_` (a segment).
 * Private to the sending engine until the campaign API exports its own parser.
 */
export interface Targets {
  contactTypeIds: number[];
  segmentIds: number[];
}

export function parseTargets(value: unknown): Targets {
  const refs = parseJson<Array<{ id?: unknown; table?: unknown }>>(value, []);
  const targets: Targets = { contactTypeIds: [], segmentIds: [] };
  for (const ref of Array.isArray(refs) ? refs : []) {
    const id = Number(ref?.id);
    if (!Number.isSafeInteger(id) || id <= 0) continue;
    if (ref.table === 'contacts_') targets.contactTypeIds.push(id);
    else if (ref.table === 'segments_') targets.segmentIds.push(id);
  }
  return targets;
}
