import { LIMITS, RESERVED_FIELD_NAMES } from '../../lib/constants';
import { ValidationError } from '../../lib/errors';
import { checkRules, SegmentField } from '../audience/segment-rules';
import type { CountryResolver } from '../reference/country-lookup';

/**
 * A journey's graph (docs/journeys.md): nodes by id, each of one type, joined by the ids they
 * name. Checking it is pure: what it needs of the account (the automation's steps, the fields,
 * the segments) is passed in, and every problem is reported at once, each naming its node.
 */

export const NODE_TYPES = ['email', 'delay', 'wait_until', 'condition', 'split', 'set_field', 'webhook', 'exit'] as const;
export type NodeType = (typeof NODE_TYPES)[number];

export const WAIT_EVENTS = ['opened', 'clicked', 'in_segment'] as const;
export const EMAIL_EVENTS = ['opened', 'clicked'] as const;
export type EmailEvent = (typeof EMAIL_EVENTS)[number];

export const NODE_ID = /^[A-Za-z0-9_-]{1,40}$/;
export const MAX_NODES = 200;
/** A split has 2 to 5 branches. */
export const SPLIT_BRANCHES = { min: 2, max: 5 } as const;
/** Reserved fields a set_field node may write: not the address (the contact's key) nor the country (a reference). */
export const SETTABLE_RESERVED = RESERVED_FIELD_NAMES.filter((name) => !['email', 'alt_email', 'country'].includes(name));
/** The longest wait or delay: a year. */
export const MAX_MINUTES = 366 * 24 * 60;

export interface FieldRule {
  field: string;
  operator: string;
  value?: string | string[];
}
export interface EventRule {
  event: EmailEvent;
  node: string;
}

export type JourneyNode =
  | { type: 'email'; schedule_utr: string; next?: string }
  | { type: 'delay'; minutes?: number; hours?: number; days?: number; until?: string; weekdays?: number[]; next?: string }
  | { type: 'wait_until'; event: EmailEvent; node: string; timeout_minutes: number; yes?: string; no?: string }
  | { type: 'wait_until'; event: 'in_segment'; segment_id: number; timeout_minutes: number; yes?: string; no?: string }
  | { type: 'condition'; rule: FieldRule | EventRule; yes?: string; no?: string }
  | { type: 'split'; branches: { percent: number; next?: string }[] }
  | { type: 'set_field'; field: string; value: string; next?: string }
  | { type: 'webhook'; url: string; next?: string }
  | { type: 'exit' };

export interface JourneyGraph {
  start: string;
  nodes: Record<string, JourneyNode>;
}

/** What a graph is checked against. */
export interface GraphContext {
  /** The utrs of this automation's steps. */
  scheduleUtrs: Set<string>;
  /** The account's segment fields (reserved, custom, engagement), for conditions. */
  fields: Map<string, SegmentField>;
  countryOf: CountryResolver;
  /** The account's segments, for waits on a segment. */
  segmentIds: Set<number>;
  /** The account's custom field names, for set_field. */
  customFields: Set<string>;
  /** The URLs of the account's outgoing webhooks: a webhook step posts to one of them. */
  webhookUrls: Set<string>;
}

const KEYS: Record<NodeType, string[]> = {
  email: ['type', 'schedule_utr', 'next'],
  delay: ['type', 'minutes', 'hours', 'days', 'until', 'weekdays', 'next'],
  wait_until: ['type', 'event', 'node', 'segment_id', 'timeout_minutes', 'yes', 'no'],
  condition: ['type', 'rule', 'yes', 'no'],
  split: ['type', 'branches'],
  set_field: ['type', 'field', 'value', 'next'],
  webhook: ['type', 'url', 'next'],
  exit: ['type'],
};

/** The ids a node leads to, with the key that names each. */
export function exitsOf(node: JourneyNode): { key: string; id: string | undefined }[] {
  switch (node.type) {
    case 'wait_until':
    case 'condition':
      return [{ key: 'yes', id: node.yes }, { key: 'no', id: node.no }];
    case 'split':
      return node.branches.map((b, i) => ({ key: `branches.${i}.next`, id: b.next }));
    case 'exit':
      return [];
    default:
      return [{ key: 'next', id: node.next }];
  }
}

/** Nodes where a contact stays a while: a loop through one of them cannot spin. */
const holds = (node: JourneyNode) => node.type === 'delay' || node.type === 'wait_until';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const wholeIn = (v: unknown, min: number, max: number) => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

/** Parses the `graph` parameter (JSON text or an object) and checks it; throws `errors.graph` listing every problem. */
export function checkGraph(input: unknown, context: GraphContext): JourneyGraph {
  let raw = input;
  if (typeof raw === 'string') {
    try {
      raw = JSON.parse(raw);
    } catch {
      throw ValidationError.of('graph', 'The graph must be valid JSON.');
    }
  }
  if (!isObject(raw) || typeof raw.start !== 'string' || !isObject(raw.nodes)) {
    throw ValidationError.of('graph', "The graph must be a JSON object with 'start' (a node id) and 'nodes' (nodes by id).");
  }
  const ids = Object.keys(raw.nodes);
  if (ids.length === 0) throw ValidationError.of('graph', 'The graph must have at least one node.');
  if (ids.length > MAX_NODES) throw ValidationError.of('graph', `The graph may have at most ${MAX_NODES} nodes.`);
  const errors: string[] = [];
  const nodes = raw.nodes as Record<string, unknown>;
  const at = (id: string, problem: string) => errors.push(`Node "${id}": ${problem}`);
  for (const id of ids) {
    if (!NODE_ID.test(id)) at(id, 'a node id has 1 to 40 letters, digits, - or _.');
    checkNode(id, nodes[id], nodes, context, (problem) => at(id, problem));
  }
  if (errors.length) throw new ValidationError({ graph: errors });
  const graph = { start: raw.start, nodes: nodes as Record<string, JourneyNode> };
  if (!(graph.start in graph.nodes)) throw ValidationError.of('graph', `'start' names no node ("${graph.start}").`);
  const shapeErrors = [...unreachable(graph), ...spinningLoops(graph)];
  if (shapeErrors.length) throw new ValidationError({ graph: shapeErrors });
  return graph;
}

function checkNode(id: string, value: unknown, nodes: Record<string, unknown>, context: GraphContext, problem: (text: string) => void): void {
  if (!isObject(value)) return problem('a node must be a JSON object.');
  const type = value.type as NodeType;
  if (!(NODE_TYPES as readonly string[]).includes(String(type))) return problem(`'type' must be one of ${NODE_TYPES.join(', ')}.`);
  for (const key of Object.keys(value)) if (!KEYS[type].includes(key)) problem(`'${key}' is no field of a ${type} node.`);
  const reference = (key: string, target: unknown, optional = true) => {
    if (target === undefined && optional) return;
    if (typeof target !== 'string' || !(target in nodes)) problem(`'${key}' names no node.`);
  };
  const emailNode = (key: string, target: unknown) => {
    if (typeof target !== 'string' || !(target in nodes)) return problem(`'${key}' names no node.`);
    if ((nodes[target] as { type?: unknown } | undefined)?.type !== 'email') problem(`'${key}' must name an email node.`);
  };
  const v = value as Record<string, unknown>;
  switch (type) {
    case 'email':
      if (typeof v.schedule_utr !== 'string' || !context.scheduleUtrs.has(v.schedule_utr)) problem("'schedule_utr' names no email of this automation.");
      reference('next', v.next);
      break;
    case 'delay': {
      const periods = ['minutes', 'hours', 'days'].filter((k) => v[k] !== undefined);
      if (v.until !== undefined) {
        if (periods.length) problem("a delay waits either a period or 'until' a time, not both.");
        if (typeof v.until !== 'string' || !/^([01]\d|2[0-3]):[0-5]\d$/.test(v.until)) problem("'until' must be a time as HH:MM.");
        const days = v.weekdays;
        if (days !== undefined && (!Array.isArray(days) || !days.length || !days.every((d) => wholeIn(d, 1, 7)))) problem("'weekdays' must list days from 1 (Monday) to 7 (Sunday).");
      } else {
        if (periods.length !== 1) problem("a delay needs one of 'minutes', 'hours', 'days' or 'until'.");
        if (v.weekdays !== undefined) problem("'weekdays' goes with 'until'.");
        for (const k of periods) if (!wholeIn(v[k], 1, MAX_MINUTES)) problem(`'${k}' must be a whole number from 1.`);
        const minutes = periods.length === 1 ? Number(v[periods[0]]) * ({ minutes: 1, hours: 60, days: 1440 } as Record<string, number>)[periods[0]] : 0;
        if (minutes > MAX_MINUTES) problem('a delay may last at most a year.');
      }
      reference('next', v.next);
      break;
    }
    case 'wait_until':
      if (!(WAIT_EVENTS as readonly string[]).includes(String(v.event))) problem(`'event' must be one of ${WAIT_EVENTS.join(', ')}.`);
      else if (v.event === 'in_segment') {
        if (v.node !== undefined) problem("'node' goes with an opened or clicked event.");
        if (!wholeIn(v.segment_id, 1, 2147483647) || !context.segmentIds.has(Number(v.segment_id))) problem("'segment_id' names no segment of this account.");
      } else {
        if (v.segment_id !== undefined) problem("'segment_id' goes with the in_segment event.");
        emailNode('node', v.node);
      }
      if (!wholeIn(v.timeout_minutes, 1, MAX_MINUTES)) problem(`'timeout_minutes' must be a whole number from 1 to ${MAX_MINUTES}.`);
      reference('yes', v.yes);
      reference('no', v.no);
      break;
    case 'condition':
      checkRule(v.rule, context, problem, emailNode);
      reference('yes', v.yes);
      reference('no', v.no);
      break;
    case 'split': {
      const branches = v.branches;
      if (!Array.isArray(branches) || branches.length < SPLIT_BRANCHES.min || branches.length > SPLIT_BRANCHES.max) {
        problem(`'branches' must list ${SPLIT_BRANCHES.min} to ${SPLIT_BRANCHES.max} branches.`);
        break;
      }
      let sum = 0;
      branches.forEach((b, i) => {
        if (!isObject(b) || Object.keys(b).some((k) => k !== 'percent' && k !== 'next')) return problem(`'branches.${i}' must be {"percent", "next"}.`);
        if (!wholeIn(b.percent, 1, 99)) problem(`'branches.${i}.percent' must be a whole number from 1 to 99.`);
        sum += Number(b.percent) || 0;
        reference(`branches.${i}.next`, b.next);
      });
      if (sum !== 100) problem(`the branches' percents add up to ${sum}, not 100.`);
      break;
    }
    case 'set_field':
      if (typeof v.field !== 'string' || !(SETTABLE_RESERVED.includes(v.field) || context.customFields.has(v.field))) problem("'field' names no field a journey can set.");
      if (typeof v.value !== 'string' || v.value.length > LIMITS.string) problem(`'value' must be text of at most ${LIMITS.string} characters.`);
      reference('next', v.next);
      break;
    case 'webhook':
      // Through an outgoing webhook of the account: its address was checked and its requests are signed there.
      if (typeof v.url !== 'string' || !context.webhookUrls.has(v.url)) problem("'url' is none of your outgoing webhooks: add it under Webhooks first.");
      reference('next', v.next);
      break;
    case 'exit':
      break;
  }
}

function checkRule(rule: unknown, context: GraphContext, problem: (text: string) => void, emailNode: (key: string, target: unknown) => void): void {
  if (!isObject(rule)) return problem("'rule' must be {\"field\", \"operator\", \"value\"} or {\"event\", \"node\"}.");
  if ('event' in rule) {
    if (Object.keys(rule).some((k) => k !== 'event' && k !== 'node')) problem("'rule' of an event has only 'event' and 'node'.");
    if (!(EMAIL_EVENTS as readonly string[]).includes(String(rule.event))) problem(`'rule.event' must be one of ${EMAIL_EVENTS.join(', ')}.`);
    return emailNode('rule.node', rule.node);
  }
  if (Object.keys(rule).some((k) => !['field', 'operator', 'value'].includes(k))) problem("'rule' has only 'field', 'operator' and 'value'.");
  const values = rule.value === undefined ? [] : Array.isArray(rule.value) ? rule.value : [rule.value];
  try {
    checkRules({ fields: [rule.field], operators: [rule.operator], values, queryType: 'and' }, context.fields, context.countryOf);
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    const what: Record<string, string> = { 'select_field.0': "'rule.field' names no field.", 'select_operator.0': "'rule.operator' does not go with that field." };
    for (const [key, list] of Object.entries(err.fields)) problem(what[key] ?? `'rule.value': ${list[0].replace(/value(\.\d+)?/, 'value')}`);
  }
}

/** Nodes no path from the start reaches. */
function unreachable(graph: JourneyGraph): string[] {
  const seen = new Set<string>([graph.start]);
  const queue = [graph.start];
  while (queue.length) {
    for (const { id } of exitsOf(graph.nodes[queue.shift()!])) {
      if (id !== undefined && !seen.has(id)) {
        seen.add(id);
        queue.push(id);
      }
    }
  }
  return Object.keys(graph.nodes).filter((id) => !seen.has(id)).map((id) => `Node "${id}": no path from the start reaches it.`);
}

/** A loop with no delay or wait on it would move a contact round forever in one go: named by its first node. */
function spinningLoops(graph: JourneyGraph): string[] {
  const state = new Map<string, 'open' | 'done'>();
  const found: string[] = [];
  const visit = (id: string) => {
    state.set(id, 'open');
    const node = graph.nodes[id];
    if (!holds(node)) {
      for (const { id: next } of exitsOf(node)) {
        if (next === undefined || holds(graph.nodes[next])) continue;
        if (state.get(next) === 'open') found.push(`Node "${next}": it is on a loop without a delay or a wait.`);
        else if (!state.has(next)) visit(next);
      }
    }
    state.set(id, 'done');
  };
  for (const id of Object.keys(graph.nodes)) if (!state.has(id)) visit(id);
  return [...new Set(found)];
}

/** The email nodes' steps, for the report and the export. */
export function emailSteps(graph: JourneyGraph): string[] {
  return [...new Set(Object.values(graph.nodes).flatMap((n) => (n.type === 'email' ? [n.schedule_utr] : [])))];
}
