/** A claimed ledger row, as the claim returns it. */
export interface LedgerRow {
  id: number;
  kind: number;
  user_id: number;
  single_send_id: number | null;
  automation_id: number | null;
  automation_schedule_id: number | null;
  contact_id: number | null;
  segment_recipient_id: number | null;
  email: string;
  email_key: string;
  attempts: number;
  /** Transmissions begun and never recorded (the worker died): see migration 0610. */
  unconfirmed: number;
  payload: string | null;
  /** The A/B test variant it renders with (an index from 0); null for every other message. */
  ab_variant?: number | null;
}

export const LEDGER_COLUMNS: (keyof LedgerRow)[] = [
  'id', 'kind', 'user_id', 'single_send_id', 'automation_id', 'automation_schedule_id',
  'contact_id', 'segment_recipient_id', 'email', 'email_key', 'attempts', 'unconfirmed', 'payload', 'ab_variant',
];
