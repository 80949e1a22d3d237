import { LIMITS } from './constants';
import { ValidationError } from './errors';
import { isInteger, messages } from './validation';

/**
 * Arrays arrive as JSON arrays, as `name[]` / `name[0]` form fields (parsed to arrays),
 * or, past the parser's array limit, as objects with numeric keys. Returns them in index order.
 */
export function asArray(value: unknown): unknown[] {
  if (value === undefined || value === null || value === '') return [];
  if (Array.isArray(value)) return value;
  if (typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>)
      .filter(([key]) => /^\d+$/.test(key))
      .sort(([a], [b]) => Number(a) - Number(b))
      .map(([, v]) => v);
  }
  return [value];
}

/**
 * A record id from a query or body value: an integer from 1 to LIMITS.maxId, else undefined.
 * Larger integers name no record, and must not reach PostgreSQL, which fails on them.
 */
export function toId(value: unknown): number | undefined {
  if (!isInteger(value)) return undefined;
  const n = Number(value);
  return n > 0 && n <= LIMITS.maxId ? n : undefined;
}

/**
 * The ids of a bulk delete (`strIds`): required, at most LIMITS.bulkIds, every entry an integer.
 * Integers that can name no record (0, negative, too large) are dropped like unknown ids;
 * none left matches nothing, which the delete answers with "Record Not Found".
 */
export function bulkIds(value: unknown, field = 'strIds'): number[] {
  const entries = asArray(value).filter((v) => !(typeof v === 'string' && v.trim() === ''));
  if (entries.length === 0) throw ValidationError.of(field, messages.required(field));
  if (entries.length > LIMITS.bulkIds) throw ValidationError.of(field, messages.arrayMax(field, LIMITS.bulkIds));
  if (!entries.every(isInteger)) throw ValidationError.of(field, `The ${field.replace(/_/g, ' ')} must contain only integers.`);
  return [...new Set(entries.map(toId).filter((id): id is number => id !== undefined))];
}
