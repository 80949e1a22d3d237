import type { Knex } from 'knex';

/** Open and click tracking of a send or automation step (extension parameters, 0 or 1). */
export interface TrackingSwitches {
  track_opens?: 0 | 1;
  track_clicks?: 0 | 1;
}

export type Switches = Required<TrackingSwitches>;

/** The account's defaults (its settings), for a send or step that does not say. */
export async function accountTracking(db: Knex, userId: number): Promise<Switches> {
  const row = await db('accounts').where({ id: userId }).first('track_opens', 'track_clicks');
  return { track_opens: flag(row?.track_opens), track_clicks: flag(row?.track_clicks) };
}

/** The switches given, the rest taken from `fallback`. */
export function withDefaults(given: TrackingSwitches, fallback: Switches): Switches {
  return { track_opens: given.track_opens ?? fallback.track_opens, track_clicks: given.track_clicks ?? fallback.track_clicks };
}

export function switchesOf(row: Record<string, unknown>): Switches {
  return { track_opens: flag(row.track_opens), track_clicks: flag(row.track_clicks) };
}

const flag = (value: unknown): 0 | 1 => (value === undefined || value === null || Number(value) === 1 ? 1 : 0);
