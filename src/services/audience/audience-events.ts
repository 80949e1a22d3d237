import type { Knex } from 'knex';

/**
 * The one place where "contacts joined a contact type" and "contacts joined a segment" are
 * announced, so automations can enrol them. Listeners run inside the transaction that made
 * the change: an enrolment is committed with the membership or not at all.
 */

/** Contacts that were created in, or moved into, a contact type. */
export interface ContactTypeJoin {
  userId: number;
  contactTypeId: number;
  contactIds: number[];
}

/**
 * Contacts that became rule members of a segment in one refresh: set-based, they are the
 * segment's recipients whose `created_at` equals `joinedAt`.
 */
export interface SegmentJoin {
  userId: number;
  segmentId: number;
  joinedAt: string;
}

type Listener<T> = (event: T, trx: Knex.Transaction) => Promise<void>;

export function createAudienceEvents() {
  const typeListeners: Listener<ContactTypeJoin>[] = [];
  const segmentListeners: Listener<SegmentJoin>[] = [];
  return {
    onContactTypeJoin(listener: Listener<ContactTypeJoin>): void {
      typeListeners.push(listener);
    },
    onSegmentJoin(listener: Listener<SegmentJoin>): void {
      segmentListeners.push(listener);
    },
    /** Lets bulk writers skip gathering joined ids when nobody listens. */
    hasContactTypeListeners(): boolean {
      return typeListeners.length > 0;
    },
    /** Lets writers skip finding which segments contacts joined when nobody listens. */
    hasSegmentListeners(): boolean {
      return segmentListeners.length > 0;
    },
    async contactTypeJoined(event: ContactTypeJoin, trx: Knex.Transaction): Promise<void> {
      if (event.contactIds.length === 0) return;
      for (const listener of typeListeners) await listener(event, trx);
    },
    async segmentJoined(event: SegmentJoin, trx: Knex.Transaction): Promise<void> {
      for (const listener of segmentListeners) await listener(event, trx);
    },
  };
}

export type AudienceEvents = ReturnType<typeof createAudienceEvents>;
