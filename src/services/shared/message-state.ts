import type { Knex } from 'knex';
import { MESSAGE_STATE as M } from '../../lib/constants';

/**
 * Every state change of a ledger message, in one place. A message is written queued (expansion,
 * an automation step, system mail); the worker's claim makes it sending (`claimMessages` in
 * db/locking.ts, which also takes over a sending row whose lease ran out; its states are
 * literals there so PostgreSQL uses the claimable index), and the outcome of that attempt ends it.
 * Pausing and cancelling a send park or drop what has not gone out yet. As an A/B test's
 * audience is written, its test share is queued with their variants and the rest held until
 * the winner is chosen.
 */
export const MESSAGE_TRANSITIONS = {
  /** a caller that answers only after the mail went out claims its own queued message */
  sendNow: { from: [M.queued], to: M.sending },
  /** the mail server accepted it */
  deliver: { from: [M.sending], to: M.sent },
  /** the mail server refused it for good (the address is suppressed with it) */
  bounce: { from: [M.sending], to: M.bounced },
  /** a bounce came back after the server had accepted it */
  bounceAfterDelivery: { from: [M.sent], to: M.bounced },
  /** a report came back after the server had accepted it: refused for the sender's authentication or reputation (reason `policy`) */
  refuseAfterDelivery: { from: [M.sent], to: M.failed },
  /** unsubscribed or suppressed after it was queued: not sent */
  suppress: { from: [M.sending], to: M.suppressed },
  /** a temporary failure: queued again for a later attempt */
  retry: { from: [M.sending], to: M.queued },
  /** given up (its last attempt failed, or it may already have gone out twice) */
  fail: { from: [M.sending], to: M.failed },
  /** its send was paused: queued messages wait */
  pause: { from: [M.queued], to: M.paused },
  /** its send was paused after the worker claimed it: it does not start */
  pauseClaimed: { from: [M.sending], to: M.paused },
  /** its send resumed: parked messages are queued again */
  resume: { from: [M.paused], to: M.queued },
  /** its send was cancelled: what has not gone out never does */
  cancel: { from: [M.queued, M.paused, M.held], to: M.cancelled },
  /** its send was cancelled after the worker claimed it: it does not start */
  cancelClaimed: { from: [M.sending], to: M.cancelled },
  /** the sender asked to try a send's failed messages again: queued with their attempts afresh */
  retryFailed: { from: [M.failed], to: M.queued },
  /** the address was erased from the account: queued mail to it is not sent */
  erase: { from: [M.queued, M.held], to: M.suppressed },
  /** an A/B test's send started: its test share is queued, each row with its variant */
  testVariant: { from: [M.held], to: M.queued },
  /** the A/B test's winner was chosen: the rest is queued with it */
  releaseWinner: { from: [M.held], to: M.queued },
} as const;

export type MessageTransition = keyof typeof MESSAGE_TRANSITIONS;

/**
 * Applies a transition to the rows of `query` that are in one of its source states, in the same
 * UPDATE (so a worker's outcome and a pause or erasure cannot both win). Awaited, it answers the
 * number of rows changed; add `.returning(…)` for the rows themselves.
 */
export function transitionMessages(query: Knex.QueryBuilder, name: MessageTransition, patch: Record<string, unknown> = {}): Knex.QueryBuilder {
  const { from, to } = MESSAGE_TRANSITIONS[name];
  return query.whereIn('state', [...from]).update({ ...patch, state: to });
}
