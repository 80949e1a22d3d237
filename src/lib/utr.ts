import { v4 as uuid, validate } from 'uuid';

/** `utr`: the UUID that identifies single sends, automations and automation schedules. */
export function newUtr(): string {
  return uuid();
}

/**
 * True for a UUID. Lookups check this first: PostgreSQL refuses to compare a uuid column
 * with other text, and such a utr can name no record anyway.
 */
export function isUtr(value: unknown): value is string {
  return typeof value === 'string' && validate(value);
}
