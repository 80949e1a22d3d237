import { RECIPIENT_TABLES } from '../../lib/constants';

export type RecipientTable = (typeof RECIPIENT_TABLES)[number];

/** A parsed recipient reference, stored and returned in this shape (`id` is a string, as the reference shows). */
export interface RecipientRef {
  id: string;
  table: RecipientTable;
}

const REF = /^(contacts_|segments_)0*(\d+)$/;

/** `contacts_{id}` / `segments_{id}` → `{ id, table }`; undefined for anything else. The ledger reads stored targets with it too. */
export function parseRecipientRef(value: unknown): RecipientRef | undefined {
  if (typeof value !== 'string') return undefined;
  const match = REF.exec(value.trim());
  if (!match || !Number.isSafeInteger(Number(match[2])) || Number(match[2]) === 0) return undefined;
  return { id: String(Number(match[2])), table: match[1] as RecipientTable };
}

/** The form a reference is written in: `contacts_12`. */
export function formatRecipientRef(ref: RecipientRef): string {
  return `${ref.table}${ref.id}`;
}
