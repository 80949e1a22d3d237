/** Formats of time the reference prescribes. */

/** `2026-11-22T09:15:03.123000Z`: ISO 8601 UTC with six fractional digits, or null. */
export function timestamp(value: unknown): string | null {
  if (value === null || value === undefined || value === '') return null;
  // What nowValue() stored (SQLite keeps the string): no Date to build, only three digits to add.
  if (typeof value === 'string' && STORED_ISO.test(value)) return `${value.slice(0, 23)}000Z`;
  const date = value instanceof Date ? value : new Date(typeof value === 'number' ? value : String(value));
  if (Number.isNaN(date.getTime())) return null;
  return `${date.toISOString().slice(0, 23)}000Z`;
}

/** `toISOString()` of a date of years 0–9999 (months 01–12, days 01–31, hours 00–23). */
const STORED_ISO = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;

/** `YYYY-MM-DD HH:MM:SS` in UTC (used by sent_at, live_at and send_at), or null. */
export function plainDateTime(value: unknown): string | null {
  const iso = timestamp(value);
  return iso === null ? null : `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

export const ZERO_DATE = '0000-00-00';
export const ZERO_TIME = '00:00:00';
