import { isCalendarDate, localTimeSpan, normaliseTime, utcToZoned, zonedToUtc } from '../../src/lib/zoned-time';

describe('zoned time', () => {
  const utc = (date: string, time: string, zone: string) => zonedToUtc(date, time, zone).toISOString();

  test('when the zone is UTC or unknown then the wall time is the instant', () => {
    expect(utc('2026-12-01', '09:30:00', 'UTC')).toBe('2026-12-01T09:30:00.000Z');
    expect(utc('2026-12-01', '09:30:00', 'Not/AZone')).toBe('2026-12-01T09:30:00.000Z');
  });

  test('when the zone has an offset then summer and winter time both apply', () => {
    expect(utc('2026-12-01', '09:30:00', 'Europe/Berlin')).toBe('2026-12-01T08:30:00.000Z');
    expect(utc('2026-07-01', '09:30:00', 'Europe/Berlin')).toBe('2026-07-01T07:30:00.000Z');
    expect(utc('2026-07-01', '09:30:00', 'America/New_York')).toBe('2026-07-01T13:30:00.000Z');
    expect(utc('2026-12-31', '23:00:00', 'Asia/Kolkata')).toBe('2026-12-31T17:30:00.000Z');
    expect(utc('2027-01-01', '00:15:00', 'Pacific/Auckland')).toBe('2026-12-31T11:15:00.000Z');
  });

  test('when the wall time is skipped or repeated by a clock change then it moves forward or takes the first', () => {
    // Berlin jumps 02:00 → 03:00 on 2026-03-29 and falls back 03:00 → 02:00 on 2026-10-25.
    expect(utc('2026-03-29', '02:30:00', 'Europe/Berlin')).toBe('2026-03-29T01:30:00.000Z');
    expect(utc('2026-10-25', '02:30:00', 'Europe/Berlin')).toBe('2026-10-25T00:30:00.000Z');
    expect(utc('2026-10-25', '03:30:00', 'Europe/Berlin')).toBe('2026-10-25T02:30:00.000Z');
  });

  test('when dates and times are checked then only real ones pass', () => {
    expect(isCalendarDate('2028-02-29')).toBe(true);
    expect(isCalendarDate('2026-02-29')).toBe(false);
    expect(isCalendarDate('2026-13-01')).toBe(false);
    expect(isCalendarDate('26-01-01')).toBe(false);
    expect(normaliseTime('9:05')).toBe('09:05:00');
    expect(normaliseTime('23:59:59')).toBe('23:59:59');
    expect(normaliseTime('24:00')).toBeUndefined();
    expect(normaliseTime('12:60')).toBeUndefined();
    expect(normaliseTime('noon')).toBeUndefined();
  });

  test('when an instant is shown on a zone\'s clock then the offset of that day applies', () => {
    expect(utcToZoned(new Date('2027-07-01T21:30:00.000Z'), 'Asia/Tokyo')).toEqual({ date: '2027-07-02', time: '06:30:00' });
    expect(utcToZoned(new Date('2027-01-15T17:00:00.000Z'), 'Europe/Berlin')).toEqual({ date: '2027-01-15', time: '18:00:00' });
    expect(utcToZoned(new Date('2027-07-01T07:30:00.000Z'), 'Europe/Berlin')).toEqual({ date: '2027-07-01', time: '09:30:00' });
    expect(utcToZoned(new Date('2027-07-01T07:30:00.000Z'), 'Asia/Kolkata')).toEqual({ date: '2027-07-01', time: '13:00:00' });
    expect(utcToZoned(new Date('2027-07-01T07:30:00.000Z'), 'Nowhere/Else')).toEqual({ date: '2027-07-01', time: '07:30:00' });
  });
});

describe('localTimeSpan', () => {
  test('when a wall-clock time is given then it first happens at UTC+14 and last at UTC−12, as the zones there read it', () => {
    const { first, last } = localTimeSpan('2026-12-01', '09:00:00');
    expect(first.toISOString()).toBe('2026-11-30T19:00:00.000Z');
    expect(last.toISOString()).toBe('2026-12-01T21:00:00.000Z');
    expect(first.getTime()).toBe(zonedToUtc('2026-12-01', '09:00:00', 'Pacific/Kiritimati').getTime());
    expect(last.getTime()).toBe(zonedToUtc('2026-12-01', '09:00:00', 'Etc/GMT+12').getTime());
  });
});
