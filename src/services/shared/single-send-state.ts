import type { Knex } from 'knex';
import { SINGLE_SEND_STATUS as S } from '../../lib/constants';
import { ConflictError } from '../../lib/errors';

/**
 * Every status change of a single send, in one place (docs/sending-and-tracking.md, "Controlling a single send"): saving makes a send
 * ready (1) and due at `due_at`; the worker starts it (2) and completes it (3); a ready or
 * initiated send can be cancelled (soft-deleted) but nothing that has started. A duplicate
 * is a new row at 0 (initiate) with no `due_at`, which sends nothing until it is saved.
 */
export const SINGLE_SEND_TRANSITIONS = {
  /** create or update: ready, due at the row's `due_at` */
  save: { from: [S.initiate, S.ready], to: S.ready },
  /** the worker claims a due send */
  start: { from: [S.ready], to: S.running },
  /** the worker has attempted every recipient */
  complete: { from: [S.running], to: S.completed },
  /** delete: the send is soft-deleted and never sends; its status stays */
  cancel: { from: [S.initiate, S.ready], to: undefined },
  /** the dashboard's composer saves a draft (and an edit makes a scheduled send a draft again) */
  saveDraft: { from: [S.initiate, S.ready], to: S.initiate },
  /** the dashboard's confirm step: a draft is sent now or scheduled */
  confirm: { from: [S.initiate], to: S.ready },
  /** pause (extension): its queued messages wait; those in flight finish */
  pause: { from: [S.ready, S.running], to: S.paused },
  /** resume (extension) a send that had started: its messages are queued again */
  resumeStarted: { from: [S.paused], to: S.running },
  /** resume (extension) a send paused before it started: it starts when due */
  resumeUnstarted: { from: [S.paused], to: S.ready },
  /** retry of the failed (extension): their messages are queued again, and the send runs until they have been tried */
  retryFailed: { from: [S.running, S.completed], to: S.running },
  /** cancel sending (extension): what was not sent never is; the counts so far stay */
  stop: { from: [S.ready, S.running, S.paused], to: S.cancelled },
} as const;

export type SingleSendTransition = keyof typeof SINGLE_SEND_TRANSITIONS;
export type SingleSendStatus = (typeof S)[keyof typeof S];

/** Statuses whose send can still be changed or deleted. */
export const SINGLE_SEND_EDITABLE: readonly number[] = SINGLE_SEND_TRANSITIONS.save.from;

/**
 * Applies a transition to the live rows of `query` that are in one of its source statuses,
 * in the same UPDATE (so a concurrent worker and an edit cannot both win). Returns the
 * number of rows changed; 0 means none was in an allowed status.
 */
export function transitionSingleSends(query: Knex.QueryBuilder, name: SingleSendTransition, patch: Record<string, unknown> = {}): Promise<number> {
  const { from, to } = SINGLE_SEND_TRANSITIONS[name];
  const changes = to === undefined ? patch : { ...patch, status: to };
  return query.whereIn('status', [...from]).whereNull('deleted_at').update(changes) as unknown as Promise<number>;
}

/** The 409 for changing or deleting a send that is sending (2), sent (3), paused (4) or cancelled (5). */
export function notEditableError(status: number, action: 'update' | 'delete'): ConflictError {
  if (status === S.paused) {
    return new ConflictError(
      action === 'update'
        ? 'This single send is paused part-way and can no longer be changed; resume or cancel it, or duplicate it to send a changed copy.'
        : 'This single send is paused part-way and is kept for its statistics; cancel it instead.',
    );
  }
  if (status === S.cancelled) {
    return new ConflictError(
      action === 'update'
        ? 'This single send was cancelled and can no longer be changed; duplicate it to send a changed copy.'
        : 'This single send was cancelled and is kept for its statistics; it cannot be deleted.',
    );
  }
  if (status === S.running) {
    return new ConflictError(
      action === 'update'
        ? 'This single send is sending and can no longer be changed; duplicate it to send a changed copy.'
        : 'This single send is sending and cannot be deleted; wait until it has completed.',
    );
  }
  return new ConflictError(
    action === 'update'
      ? 'This single send has been sent and can no longer be changed; duplicate it to send a changed copy.'
      : 'This single send has been sent and is kept for its statistics; it cannot be deleted.',
  );
}
