/**
 * Wall-clock date and time in an IANA time zone → the UTC instant, with Intl only.
 * Used for `schedule_date` / `schedule_time`, which are in the account's time zone.
 */

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/;

/** A real calendar date `YYYY-MM-DD` (2026-02-30 is not). */
export function isCalendarDate(value: string): boolean {
  const m = DATE.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return y >= 1 && date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/** `H:MM`, `HH:MM` or `HH:MM:SS` on a 24-hour clock, normalised to `HH:MM:SS`; undefined when invalid. */
export function normaliseTime(value: string): string | undefined {
  const m = TIME.exec(value.trim());
  if (!m) return undefined;
  const [h, mi, s] = [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
  if (h > 23 || mi > 59 || s > 59) return undefined;
  return [h, mi, s].map((n) => String(n).padStart(2, '0')).join(':');
}

export function isTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

/** How far `timeZone` is ahead of UTC at the instant `utcMs`, in milliseconds. */
function offsetAt(utcMs: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(utcMs));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return wall - Math.floor(utcMs / 1000) * 1000;
}

/**
 * The UTC instant of `date` `time` on the wall clock of `timeZone` (an unknown zone counts as
 * UTC). A time skipped by a daylight-saving jump moves forward by the jump (02:30 → 03:30);
 * a time that happens twice takes the first.
 */
export function zonedToUtc(date: string, time: string, timeZone: string): Date {
  const [y, mo, d] = date.split('-').map(Number);
  const [h, mi, s] = time.split(':').map(Number);
  const wall = Date.UTC(y, mo - 1, d, h, mi, s);
  if (!isTimeZone(timeZone)) return new Date(wall);
  // The zone's offsets a day before and a day after bracket any transition near this time.
  const DAY = 86_400_000;
  const before = offsetAt(wall - DAY, timeZone);
  const after = offsetAt(wall + DAY, timeZone);
  const valid = [wall - before, wall - after].filter((t) => t + offsetAt(t, timeZone) === wall);
  // Two valid readings: the wall time happens twice, take the first. None: it was skipped,
  // and reading it with the earlier offset lands the same distance after the jump.
  return new Date(valid.length > 0 ? Math.min(...valid) : wall - before);
}

/** The wall-clock date (`YYYY-MM-DD`) and time (`HH:MM:SS`) of `instant` in `timeZone` (an unknown zone counts as UTC). */
export function utcToZoned(instant: Date, timeZone: string): { date: string; time: string } {
  const offset = isTimeZone(timeZone) ? offsetAt(instant.getTime(), timeZone) : 0;
  const wall = new Date(Math.floor(instant.getTime() / 1000) * 1000 + offset).toISOString();
  return { date: wall.slice(0, 10), time: wall.slice(11, 19) };
}

/** `schedule_type` 2 (extension): `schedule_date` `schedule_time` on each recipient's own clock. */
export const SCHEDULE_LOCAL_TIME = 2;

/**
 * The zones furthest ahead of and behind UTC: a wall-clock time comes first at UTC+14 (the
 * Line Islands, Pacific/Kiritimati) and last at UTC−12 (Etc/GMT+12).
 */
const FIRST_ZONE_MS = 14 * 3_600_000;
const LAST_ZONE_MS = -12 * 3_600_000;

/** The first and the last instant at which `date` `time` happens somewhere on Earth. */
export function localTimeSpan(date: string, time: string): { first: Date; last: Date } {
  const [y, mo, d] = date.split('-').map(Number);
  const [h, mi, s] = time.split(':').map(Number);
  const wall = Date.UTC(y, mo - 1, d, h, mi, s);
  return { first: new Date(wall - FIRST_ZONE_MS), last: new Date(wall - LAST_ZONE_MS) };
}
