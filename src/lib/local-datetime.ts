/**
 * Dates as people type them into a `datetime-local` input or a CSV cell:
 * `2026-11-22`, `2026-11-22T09:15`, `2026-11-22 09:15:03`. They carry no time zone and are
 * read as UTC.
 */
const LOCAL = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?Z?$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** The parts of a valid local date-time text, or undefined (2026-02-30 and 24:00 are invalid). */
function parts(raw: string): RegExpExecArray | undefined {
  const m = LOCAL.exec(raw.trim());
  if (!m) return undefined;
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1) return undefined;
  if (day > (month === 2 && isLeapYear(Number(m[1])) ? 29 : DAYS_IN_MONTH[month - 1])) return undefined;
  if (m[4] !== undefined && (Number(m[4]) > 23 || Number(m[5]) > 59 || (m[6] !== undefined && Number(m[6]) > 59))) return undefined;
  return m;
}

/**
 * `YYYY-MM-DDTHH:MM`, the form custom datetime values are stored in, so that they compare as
 * text; undefined when the text is not a valid date. (Hot in imports: no Date objects.)
 */
export function localMinute(raw: string): string | undefined {
  // Already in that form (what an export of this service writes): checked without a regular expression or a new string.
  if (raw.length === 16 && isMinuteForm(raw)) return raw;
  const m = parts(raw);
  return m && `${m[1]}-${m[2]}-${m[3]}T${m[4] ?? '00'}:${m[5] ?? '00'}`;
}

/** Two ASCII digits at `at` as a number, or -1. */
function twoDigits(text: string, at: number): number {
  const a = text.charCodeAt(at) - 48;
  const b = text.charCodeAt(at + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/** A valid `YYYY-MM-DDTHH:MM` (16 characters), by the rules of `parts`. */
function isMinuteForm(text: string): boolean {
  if (text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(10) !== 84 || text.charCodeAt(13) !== 58) return false;
  const century = twoDigits(text, 0);
  const years = twoDigits(text, 2);
  const month = twoDigits(text, 5);
  const day = twoDigits(text, 8);
  const hour = twoDigits(text, 11);
  const minute = twoDigits(text, 14);
  if (century < 0 || years < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59) return false;
  return day <= (month === 2 && isLeapYear(century * 100 + years) ? 29 : DAYS_IN_MONTH[month - 1]);
}

export interface LocalDateTime {
  /** The first instant the text names. */
  start: Date;
  /** The first instant after it, at the precision written (a day, a minute or a second). */
  end: Date;
}

export function parseLocalDateTime(raw: unknown): LocalDateTime | undefined {
  if (typeof raw !== 'string') return undefined;
  const m = parts(raw);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4] ?? 0, m[5] ?? 0, m[6] ?? 0].map(Number);
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  const step = m[6] !== undefined ? 1000 : m[4] !== undefined ? 60_000 : 86_400_000;
  return { start: new Date(ms), end: new Date(ms + step) };
}

/** The `YYYY-MM-DDTHH:MM` text of an instant, rounded down or up to the whole minute. */
export function minuteText(date: Date, round: 'down' | 'up'): string {
  const ms = round === 'down' ? Math.floor(date.getTime() / 60_000) * 60_000 : Math.ceil(date.getTime() / 60_000) * 60_000;
  return new Date(ms).toISOString().slice(0, 16);
}
