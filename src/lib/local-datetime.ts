/**
 * Dates as people type them into a `datetime-local` input or a CSV cell:
 * `2026-11-22`, `2026-11-22T09:15`, `2026-11-22 09:15:03`. They carry no time zone and are
 * read as UTC.
 */
const LOCAL = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?Z?$/;

export interface LocalDateTime {
  /** The first instant the text names. */
  start: Date;
  /** The first instant after it, at the precision written (a day, a minute or a second). */
  end: Date;
  /** `YYYY-MM-DDTHH:MM`, the form custom datetime values are stored in (compared as text). */
  minute: string;
}

export function parseLocalDateTime(raw: unknown): LocalDateTime | undefined {
  if (typeof raw !== 'string' && typeof raw !== 'number') return undefined;
  const m = LOCAL.exec(String(raw).trim());
  if (!m) return undefined;
  const [year, month, day, hour = 0, minute = 0, second = 0] = m.slice(1).map((v) => (v === undefined ? undefined : Number(v))) as number[];
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  const start = new Date(ms);
  // Date.UTC rolls 2026-02-30 over to March: a date that does not round-trip is invalid.
  if (start.getUTCFullYear() !== year || start.getUTCMonth() !== month - 1 || start.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) {
    return undefined;
  }
  const step = m[6] !== undefined ? 1000 : m[4] !== undefined ? 60_000 : 86_400_000;
  return { start, end: new Date(ms + step), minute: start.toISOString().slice(0, 16) };
}

/** The `YYYY-MM-DDTHH:MM` text of an instant, rounded down or up to the whole minute. */
export function minuteText(date: Date, round: 'down' | 'up'): string {
  const ms = round === 'down' ? Math.floor(date.getTime() / 60_000) * 60_000 : Math.ceil(date.getTime() / 60_000) * 60_000;
  return new Date(ms).toISOString().slice(0, 16);
}
