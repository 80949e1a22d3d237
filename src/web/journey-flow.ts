import type { JourneyGraph, JourneyNode } from '../services/journeys';

/**
 * The journey as the dashboard draws it: a tree from the start node, top to bottom, each node
 * with its exits (labelled Yes / No / 30%), each exit leading to the next node, to a node drawn
 * already (a join or a loop: "goes on to"), or to the end. The same nested lists are a flow
 * chart on a wide screen and an indented list on a narrow one (app.css).
 */

export interface FlowCounts {
  entered: number;
  waiting: number;
  completed: number;
  failed: number;
}

export interface FlowNode {
  id: string;
  type: string;
  kind: string;
  summary: string;
  counts?: FlowCounts;
  errors: string[];
  selected: boolean;
  exits: FlowEdge[];
}

export interface FlowEdge {
  /** `<node id>|<exit key>`: the "+" button's value. */
  edge: string;
  label: string;
  child?: FlowNode;
  goesTo?: string;
}

/** Node types in plain words. */
export const KIND: Record<string, string> = {
  email: 'Send an email',
  delay: 'Wait',
  wait_until: 'Wait for',
  condition: 'Check',
  split: 'Split at random',
  set_field: 'Update a field',
  webhook: 'Call a web address',
  exit: 'End',
};

export interface FlowNames {
  /** Step utr → subject. */
  steps: Map<string, string>;
  /** Segment id → name. */
  segments: Map<number, string>;
}

const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
const DAYS = ['', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

/** One line saying what a node does, in words. */
export function summaryOf(node: JourneyNode, names: FlowNames, graph: JourneyGraph): string {
  const emailName = (id: string) => {
    const target = graph.nodes[id];
    return target?.type === 'email' ? `“${names.steps.get(target.schedule_utr) ?? 'an email'}”` : 'an email';
  };
  switch (node.type) {
    case 'email':
      return names.steps.get(node.schedule_utr) ?? 'No email chosen';
    case 'delay':
      if (node.until) return `until ${node.until}${node.weekdays && node.weekdays.length < 7 ? ` on ${node.weekdays.map((d) => DAYS[d]).join(', ')}` : ''}, their time`;
      if (node.days) return plural(node.days, 'day');
      if (node.hours) return plural(node.hours, 'hour');
      return plural(node.minutes ?? 0, 'minute');
    case 'wait_until': {
      const within = node.timeout_minutes % 1440 === 0 ? plural(node.timeout_minutes / 1440, 'day') : node.timeout_minutes % 60 === 0 ? plural(node.timeout_minutes / 60, 'hour') : plural(node.timeout_minutes, 'minute');
      if (node.event === 'in_segment') return `joining ${names.segments.get(node.segment_id) ?? 'a segment'}, up to ${within}`;
      return `${node.event === 'clicked' ? 'a click in' : 'an open of'} ${emailName(node.node)}, up to ${within}`;
    }
    case 'condition': {
      const rule = node.rule;
      if ('event' in rule) return `${rule.event === 'clicked' ? 'clicked' : 'opened'} ${emailName(rule.node)}?`;
      const value = rule.value === undefined ? '' : ` ${Array.isArray(rule.value) ? rule.value.join(' and ') : rule.value}`;
      return `${rule.field.replace(/_/g, ' ')} ${rule.operator}${value}?`;
    }
    case 'split':
      return node.branches.map((b) => `${b.percent}%`).join(' / ');
    case 'set_field':
      return `${node.field.replace(/_/g, ' ')} = “${node.value}”`;
    case 'webhook':
      return node.url;
    case 'exit':
      return 'The journey ends';
  }
}

function exitLabels(node: JourneyNode): { key: string; label: string; id: string | undefined }[] {
  switch (node.type) {
    case 'wait_until':
      return [{ key: 'yes', label: 'Yes', id: node.yes }, { key: 'no', label: 'No (time out)', id: node.no }];
    case 'condition':
      return [{ key: 'yes', label: 'Yes', id: node.yes }, { key: 'no', label: 'No', id: node.no }];
    case 'split':
      return node.branches.map((b, i) => ({ key: `branches.${i}.next`, label: `${b.percent}%`, id: b.next }));
    case 'exit':
      return [];
    default:
      return [{ key: 'next', label: '', id: node.next }];
  }
}

/**
 * The drawing: the tree from the start, then nodes no path reaches (so a draft's loose ends
 * stay visible and editable). `errors` are the messages per node id.
 */
export function flowOf(graph: JourneyGraph, names: FlowNames, counts: Map<string, FlowCounts>, errors: Map<string, string[]>, selected: string | undefined): { start: FlowNode | undefined; loose: FlowNode[] } {
  const drawn = new Set<string>();
  const build = (id: string): FlowNode => {
    drawn.add(id);
    const node = graph.nodes[id];
    const exits: FlowEdge[] = exitLabels(node).map((exit) => {
      const edge = `${id}|${exit.key}`;
      if (exit.id === undefined || !(exit.id in graph.nodes)) return { edge, label: exit.label };
      if (drawn.has(exit.id)) return { edge, label: exit.label, goesTo: `${KIND[graph.nodes[exit.id].type]}: ${summaryOf(graph.nodes[exit.id], names, graph)}` };
      return { edge, label: exit.label, child: build(exit.id) };
    });
    return { id, type: node.type, kind: KIND[node.type] ?? node.type, summary: summaryOf(node, names, graph), counts: counts.get(id), errors: errors.get(id) ?? [], selected: id === selected, exits };
  };
  const start = graph.start && graph.start in graph.nodes ? build(graph.start) : undefined;
  const loose = Object.keys(graph.nodes).filter((id) => !drawn.has(id)).map((id) => (drawn.has(id) ? undefined : build(id))).filter((n): n is FlowNode => n !== undefined);
  return { start, loose };
}

/** The graph's messages by node (`Node "x": …` → x: …), and the others. */
export function errorsByNode(messages: string[]): { byNode: Map<string, string[]>; general: string[] } {
  const byNode = new Map<string, string[]>();
  const general: string[] = [];
  for (const message of messages) {
    const match = /^Node "([^"]*)": (.*)$/.exec(message);
    if (!match) {
      general.push(message);
      continue;
    }
    byNode.set(match[1], [...(byNode.get(match[1]) ?? []), match[2]]);
  }
  return { byNode, general };
}
