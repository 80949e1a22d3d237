import type { Knex } from 'knex';

/**
 * Which statistics each ledger event moves: a column of the message's single send and one of
 * its automation (the reference names them differently). Every counter move goes through
 * `moveCounters`, in the transaction that records the event, so the statistics agree with the ledger.
 */
export const COUNTERS = {
  /** recipients queued: a send's expansion sets its count at once; an automation's grows per step */
  triggered: { send: 'triggered', automation: 'total_triggered' },
  /** accepted by the mail server (taken back when a bounce arrives later) */
  delivered: { send: 'delivered', automation: 'total_delivered' },
  /** refused at SMTP time or bounced afterwards */
  bounced: { send: 'bounces', automation: 'total_bounces' },
  /** given up after its retries */
  failed: { send: 'failed', automation: 'total_failed' },
  /** the first unsubscribe (or complaint) of a message */
  unsubscribed: { send: 'unsubscribes', automation: 'total_unsubscribe' },
  /** every open */
  opened: { send: 'total_opens', automation: 'total_opens' },
  /** the first open of a message */
  openedFirst: { send: 'unique_opens', automation: 'total_unique_opens' },
  /** the first open of a message not made by a proxy or scanner */
  openedByPerson: { send: 'unique_human_opens', automation: 'total_unique_human_opens' },
  /** every click */
  clicked: { send: 'total_clicks', automation: 'total_clicks' },
  /** the first click of a message */
  clickedFirst: { send: 'unique_clicks', automation: 'total_unique_clicks' },
  /** a delivered message in which a Liquid value failed and was left empty */
  templateErrors: { send: 'template_errors', automation: 'total_template_errors' },
} as const;

export type CounterEvent = keyof typeof COUNTERS;
/** How much each event moves (negative takes back); 0 or absent moves nothing. */
export type CounterMoves = Partial<Record<CounterEvent, number>>;

/** What a ledger row counts towards. */
export interface CounterOwners {
  single_send_id: number | null;
  automation_id: number | null;
}

const TABLES = { send: 'single_sends', automation: 'automations' } as const;

/**
 * Moves the counters of one send or automation in one UPDATE; answers the new values of the
 * moved counters by event (undefined when nothing moved or the row is gone).
 */
async function move(trx: Knex.Transaction, owner: keyof typeof TABLES, id: number, moves: CounterMoves): Promise<CounterMoves | undefined> {
  const events = (Object.keys(moves) as CounterEvent[]).filter((event) => moves[event]);
  if (!events.length) return undefined;
  const changes = Object.fromEntries(events.map((event) => {
    const column = COUNTERS[event][owner];
    return [column, trx.raw('?? + ?', [column, Number(moves[event])])];
  }));
  const [row] = await trx(TABLES[owner]).where({ id }).update(changes).returning(events.map((event) => COUNTERS[event][owner]));
  return row && Object.fromEntries(events.map((event) => [event, Number(row[COUNTERS[event][owner]])]));
}

/**
 * Applies the moves of one message's event to its single send and its automation; answers the
 * send's new values of the moved counters.
 */
export async function moveCounters(trx: Knex.Transaction, owners: CounterOwners, moves: CounterMoves): Promise<CounterMoves | undefined> {
  const send = owners.single_send_id ? await move(trx, 'send', Number(owners.single_send_id), moves) : undefined;
  if (owners.automation_id) await move(trx, 'automation', Number(owners.automation_id), moves);
  return send;
}

/** Counts one event for each of many rows: one UPDATE per send, then one per automation. */
export async function countEach(trx: Knex.Transaction, rows: CounterOwners[], event: CounterEvent): Promise<void> {
  for (const [owner, key] of [['send', 'single_send_id'], ['automation', 'automation_id']] as const) {
    const counts = new Map<number, number>();
    for (const row of rows) {
      const id = row[key];
      if (id !== null && id !== undefined) counts.set(Number(id), (counts.get(Number(id)) ?? 0) + 1);
    }
    for (const [id, n] of counts) await move(trx, owner, id, { [event]: n });
  }
}

/**
 * Marks a message unsubscribed and counts it, once however often the recipient (or a
 * complaint) unsubscribes it; answers whether this was the first time.
 */
export async function countUnsubscribe(trx: Knex.Transaction, message: CounterOwners & { id: number }, now: string): Promise<boolean> {
  const first = await trx('send_messages').where({ id: message.id }).whereNull('unsubscribed_at').update({ unsubscribed_at: now });
  if (first) await moveCounters(trx, message, { unsubscribed: 1 });
  return first > 0;
}
