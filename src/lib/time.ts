/** Formats of time the reference prescribes. */

/** `2026-11-22T09:15:03.123000Z`: ISO 8601 UTC with six fractional digits, or null. */
export function timestamp(value: unknown): string | null {
  if (value === null || value === undefined || value === '') return null;
  const date = value instanceof Date ? value : new Date(typeof value === 'number' ? value : String(value));
  if (Number.isNaN(date.getTime())) return null;
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** `YYYY-MM-DD HH:MM:SS` in UTC (used by sent_at, live_at and send_at), or null. */
export function plainDateTime(value: unknown): string | null {
  const iso = timestamp(value);
  return iso === null ? null : `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

export const ZERO_DATE = '0000-00-00';
export const ZERO_TIME = '00:00:00';
