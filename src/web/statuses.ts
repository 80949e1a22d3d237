import { AUTOMATION_STATUS, AUTOMATION_TYPES, SINGLE_SEND_STATUS } from '../lib/constants';

/** A stored number's name in its map of lib/constants.ts, and the words a page shows for it. */
interface Named {
  name: string;
  label: string;
}

/**
 * Names and labels of a constants map's stored numbers, so that views compare names
 * (`send.statusName == 'completed'`), never numbers; the compiler asks for a label per name.
 */
function named<M extends Readonly<Record<string, number>>>(map: M, labels: { readonly [K in keyof M]: string }): (value: number) => Named {
  const byValue = new Map(Object.entries(map).map(([name, value]): [number, Named] => [value, { name, label: labels[name] }]));
  return (value) => byValue.get(value) ?? { name: String(value), label: String(value) };
}

const singleSendStatus = named(SINGLE_SEND_STATUS, {
  initiate: 'Draft',
  ready: 'Scheduled',
  running: 'Sending',
  completed: 'Sent',
  paused: 'Paused',
  cancelled: 'Cancelled',
});
const automationStatus = named(AUTOMATION_STATUS, { draft: 'Draft', live: 'Live', paused: 'Paused' });
const automationType = named(AUTOMATION_TYPES, { welcome: 'Welcome', custom: 'Custom' });

/** A single send with its status's name and label. */
export function withSendStatus<T extends { status: number }>(send: T): T & { statusName: string; statusLabel: string } {
  const status = singleSendStatus(send.status);
  return { ...send, statusName: status.name, statusLabel: status.label };
}

/** An automation with its status's and type's names and labels. */
export function withAutomationStatus<T extends { status: number; automation_type: number }>(
  automation: T,
): T & { statusName: string; statusLabel: string; typeLabel: string } {
  const status = automationStatus(automation.status);
  return { ...automation, statusName: status.name, statusLabel: status.label, typeLabel: automationType(automation.automation_type).label };
}
