import type { Knex } from 'knex';
import { AB_TEST_STATE as A } from '../../lib/constants';

/**
 * Every state change of a single send's A/B test, in one place. A test is saved (and replaced)
 * while its send has not started; the send's start queues the test share with its variants
 * and sets when the winner is due; choosing the winner (by the rule in the worker, or by hand)
 * releases the held rest with it. Each is guarded in the UPDATE itself, so of two workers (or a
 * worker and a person choosing) exactly one chooses.
 */
export const AB_TEST_TRANSITIONS = {
  /** the send started: its test share is out, the winner is due at `decide_at` */
  start: { from: [A.waiting], to: A.testing },
  /** the send started with nobody left for a winner (no audience, or all of it is the test share) */
  startWithoutRest: { from: [A.waiting], to: A.sent },
  /** the winner was chosen and the rest queued with it */
  choose: { from: [A.testing], to: A.sent },
} as const;

export type AbTestTransition = keyof typeof AB_TEST_TRANSITIONS;

/** The API's words for the states. */
export const AB_STATUS_NAMES = { [A.waiting]: 'waiting', [A.testing]: 'testing', [A.sent]: 'sent' } as const;
export type AbStatusName = (typeof AB_STATUS_NAMES)[keyof typeof AB_STATUS_NAMES];

/** Applies a transition to the rows of `query` in one of its source states; answers how many changed. */
export function transitionAbTests(query: Knex.QueryBuilder, name: AbTestTransition, patch: Record<string, unknown> = {}): Promise<number> {
  const { from, to } = AB_TEST_TRANSITIONS[name];
  return query.whereIn('state', [...from]).update({ ...patch, state: to }) as unknown as Promise<number>;
}
