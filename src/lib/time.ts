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

/**
 * `2026-11-22 10:15:03 +01:00`: the time on the clock of `timeZone` with its offset from UTC at
 * that moment, or null (the dashboard's CSV downloads; the API's keep the reference's formats).
 */
export function zonedDateTime(value: unknown, timeZone: string): string | null {
  // A plainDateTime() value is UTC.
  const plain = typeof value === 'string' && /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(value);
  const iso = timestamp(plain ? `${(value as string).replace(' ', 'T')}Z` : value);
  if (iso === null) return null;
  const date = new Date(iso);
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZoneName: 'longOffset',
  }).formatToParts(date);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  // "GMT+01:00", or "GMT" alone at offset zero.
  const offset = part('timeZoneName').replace(/^GMT/, '') || '+00:00';
  return `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')}:${part('second')} ${offset}`;
}
