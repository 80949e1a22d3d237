import type { Knex } from 'knex';
import { AUTOMATION_STATUS as A } from '../../lib/constants';

/**
 * Every status change of an automation (docs/decisions.md, "Automations"): it is created (and duplicated) as a
 * draft; set-live takes a draft or paused one live and needs an unsubscribe group; set-live of
 * a live one changes nothing; only a live one can be paused. The worker notices each change
 * (enrolment.ts) and sends only while it is live.
 */
export const AUTOMATION_TRANSITIONS = {
  setLive: { from: [A.draft, A.paused], to: A.live },
  pause: { from: [A.live], to: A.paused },
} as const;

export type AutomationTransition = keyof typeof AUTOMATION_TRANSITIONS;

/**
 * Applies a transition to the live rows of `query` that are in one of its source statuses, in
 * the same UPDATE (so two requests cannot both change it). Returns the number of rows changed;
 * 0 means none was in an allowed status.
 */
export function transitionAutomations(query: Knex.QueryBuilder, name: AutomationTransition, patch: Record<string, unknown> = {}): Promise<number> {
  const { from, to } = AUTOMATION_TRANSITIONS[name];
  return query.whereIn('status', [...from]).whereNull('deleted_at').update({ ...patch, status: to }) as unknown as Promise<number>;
}
