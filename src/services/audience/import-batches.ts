/**
 * The write side of a CSV import: rows collected into batches by lane and written while the
 * file is read on. src/db/import-lanes.ts and import-batches.ts say how each database takes them; the import
 * service (contact-import.ts) reads the file and counts what it skips.
 */
import type { Knex } from 'knex';
import { importBatchRows, UpsertCount } from '../../db/contact-upsert';
import { ImportRows, newImportRows } from '../../db/import-batches';
import { importLane, importLanes } from '../../db/import-lanes';

/** An address a row of the file marks: unsubscribed (global unsubscribe list) or bounced/cleaned (suppression list). */
export interface MarkedAddress {
  address: string;
  bounced: boolean;
}
/** Writes one batch; the marked addresses go on the global unsubscribe or the suppression list. */
export type WriteBatch = (rows: ImportRows, durable: boolean, marked: MarkedAddress[]) => Promise<UpsertCount>;

/** Rows created and updated, added to as each batch commits. */
export interface WrittenCounts {
  created: number;
  updated: number;
}

/** The batch a lane is filling. */
interface Filling {
  rows: ImportRows;
  /** Addresses of the batch that go on the global unsubscribe or the suppression list (by key). */
  marked: Map<string, MarkedAddress>;
  /** The newest row's email key. */
  lastKey: string;
}

interface Lane {
  filling: Filling;
  /** The lane's batch being written, if any. */
  writing: Promise<void> | undefined;
  /** Batches written, emptied for reuse. */
  spare: ImportRows[];
}

/**
 * Collects rows into batches, one batch filling per lane (a row goes to the lane of its
 * email, see `importLane`). A lane writes its batches in order, each while the next is read;
 * lanes write at the same time and never share an email, so a later row of the file always
 * reaches the database after an earlier one of the same email. Memory stays bounded: per lane
 * one batch being written, one waiting for it and one filling, reused from batch to batch. A
 * full batch is sent only when the next row arrives, so the last batches are never empty: the
 * very last alone is written durably (see db/contact-upsert.ts). `keyAt` is the email key's place in a row's values.
 */
export function importBatchWriter(db: Knex, keyAt: number, write: WriteBatch, counts: WrittenCounts) {
  const batchRows = importBatchRows(db);
  // Lanes (see `importLanes`) and whether they write while the next rows are read.
  const { lanes: laneCount, concurrent } = importLanes(db);
  const newRows = () => newImportRows(db);
  const filling = (rows: ImportRows): Filling => ({ rows, marked: new Map(), lastKey: '' });
  const lanes: Lane[] = Array.from({ length: laneCount }, () => ({ filling: filling(newRows()), writing: undefined, spare: [] }));
  let full: Lane | undefined;

  async function send(lane: Lane, batch: Filling, durable: boolean): Promise<void> {
    // The lane's previous batch first: it may hold earlier rows of the same emails.
    if (lane.writing) await lane.writing;
    const writing = write(batch.rows, durable, [...batch.marked.values()]).then((count) => {
      counts.created += count.created;
      counts.updated += count.updated;
      batch.rows.clear();
      lane.spare.push(batch.rows);
    });
    // Handled when awaited (by a later send, finish or settle); this only keeps Node from calling it unhandled meanwhile.
    writing.catch(() => undefined);
    lane.writing = writing;
    // Without concurrent writers (SQLite), reading on while a batch is written only keeps more rows alive.
    if (!concurrent) await writing;
  }

  return {
    /** Adds a row (values in column order); true when a full batch waits to be sent with `sendFull`. */
    add(values: unknown[], mark: { unsubscribed: boolean; bounced: boolean }): boolean {
      const key = values[keyAt] as string;
      const lane = lanes[importLane(key, laneCount)];
      const batch = lane.filling;
      // A marked row stays so even when a later row of the file repeats its address.
      if (mark.unsubscribed || mark.bounced) batch.marked.set(key, { address: values[0] as string, bounced: mark.bounced || !!batch.marked.get(key)?.bounced });
      batch.rows.put(key, values);
      batch.lastKey = key;
      if (batch.rows.size <= batchRows) return false;
      full = lane;
      return true;
    },
    /** Sends the full batch but its newest row, which starts the lane's next batch. */
    async sendFull(): Promise<void> {
      const lane = full!;
      full = undefined;
      const batch = lane.filling;
      const next = filling(lane.spare.pop() ?? newRows());
      batch.rows.moveLastTo(next.rows);
      next.lastKey = batch.lastKey;
      const held = batch.marked.get(batch.lastKey);
      if (held !== undefined) {
        batch.marked.delete(batch.lastKey);
        next.marked.set(batch.lastKey, held);
      }
      lane.filling = next;
      await send(lane, batch, false);
    },
    async finish(): Promise<void> {
      // The lanes' last batches go one after the other, after every other one has committed;
      // the very last alone is durable.
      for (const lane of lanes) await lane.writing;
      const last = lanes.filter((lane) => lane.filling.rows.size > 0);
      for (const [at, lane] of last.entries()) {
        await send(lane, lane.filling, at === last.length - 1);
        await lane.writing;
      }
    },
    /** Waits for writes still running (after a failure elsewhere), ignoring their outcome. */
    async settle(): Promise<void> {
      await Promise.allSettled(lanes.map((lane) => lane.writing));
    },
  };
}

export type ImportBatchWriter = ReturnType<typeof importBatchWriter>;
