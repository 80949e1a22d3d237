import type { Knex } from 'knex';
import { isPostgres } from './index';

/**
 * Lanes of an import: rows are dealt to a lane by their email (`importLane`), each lane writes
 * its batches one after the other, and the lanes write at the same time. PostgreSQL runs two
 * (a backend each, while Node parses on): their batches never share an email, so they never
 * wait for each other, and a later row of the file still reaches the database after an
 * earlier one of the same email. (Batches that overlapped used to wait for each other: with
 * updates spread through a file, that was nearly every batch, so the two backends took turns.)
 * SQLite writes in this thread: one lane, each batch written before the next row is read.
 */
export function importLanes(db: Knex): { lanes: number; concurrent: boolean } {
  return isPostgres(db) ? { lanes: 2, concurrent: true } : { lanes: 1, concurrent: false };
}

/** The lane (0 … lanes − 1) of an email key: FNV-1a of its UTF-16 code units. */
export function importLane(key: string, lanes: number): number {
  if (lanes === 1) return 0;
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i += 1) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % lanes;
}

