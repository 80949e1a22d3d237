import { plainDateTime, timestamp } from '../../src/lib/time';

describe('timestamps of records', () => {
  test('when a stored ISO string, a Date, a number or another date text is formatted then each gives six fractional digits in UTC', () => {
    const iso = '2026-11-22T09:15:03.123Z';
    expect(timestamp(iso)).toBe('2026-11-22T09:15:03.123000Z');
    expect(timestamp(new Date(iso))).toBe('2026-11-22T09:15:03.123000Z');
    expect(timestamp(Date.parse(iso))).toBe('2026-11-22T09:15:03.123000Z');
    expect(timestamp('2026-11-22 10:15:03+01')).toBe('2026-11-22T09:15:03.000000Z');
    expect(plainDateTime(iso)).toBe('2026-11-22 09:15:03');
  });

  test('when the value is empty or not a date then null', () => {
    expect([timestamp(null), timestamp(undefined), timestamp(''), timestamp('not a date'), timestamp('2026-13-01T00:00:00.000Z')]).toEqual([null, null, null, null, null]);
  });
});
