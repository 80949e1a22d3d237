import { exitsOf, JourneyGraph, JourneyNode, NodeType } from './graph';

/**
 * Changes to a draft graph, as the dashboard's flow makes them: a node put on an edge, a node's
 * settings changed, a node taken out. Pure functions on the JSON: a draft may be incomplete
 * (the checks run when it is saved), and undo is the draft before the change.
 */

/** An edge: the exit `key` of node `from` (`next`, `yes`, `no`, `branches.<i>.next`), or the start (`from` empty). */
export interface Edge {
  from: string;
  key: string;
}

/** Where an edge leads now. */
export function targetOf(graph: JourneyGraph, edge: Edge): string | undefined {
  if (!edge.from) return graph.start || undefined;
  const node = graph.nodes[edge.from];
  return node ? exitsOf(node).find((e) => e.key === edge.key)?.id : undefined;
}

function withExit(node: JourneyNode, key: string, target: string | undefined): JourneyNode {
  const copy = JSON.parse(JSON.stringify(node)) as JourneyNode & Record<string, unknown>;
  const branch = /^branches\.(\d+)\.next$/.exec(key);
  if (branch && copy.type === 'split') {
    const b = copy.branches[Number(branch[1])];
    if (b) {
      if (target === undefined) delete b.next;
      else b.next = target;
    }
    return copy;
  }
  if (target === undefined) delete copy[key];
  else copy[key] = target;
  return copy;
}

/** A new node of `type` with its first exit leading to `next`; `defaults` fills what the type needs. */
export function newNode(type: NodeType, next: string | undefined, defaults: { scheduleUtr?: string; emailNode?: string }): JourneyNode {
  const on = next === undefined ? {} : { next };
  switch (type) {
    case 'email':
      return { type, schedule_utr: defaults.scheduleUtr ?? '', ...on };
    case 'delay':
      return { type, days: 1, ...on };
    case 'wait_until':
      return { type, event: 'opened', node: defaults.emailNode ?? '', timeout_minutes: 1440, ...(next === undefined ? {} : { yes: next }) };
    case 'condition':
      return { type, rule: { field: 'first_name', operator: 'is not empty' }, ...(next === undefined ? {} : { yes: next }) };
    case 'split':
      return { type, branches: [{ percent: 50, ...on }, { percent: 50 }] };
    case 'set_field':
      return { type, field: 'city', value: '', ...on };
    case 'webhook':
      return { type, url: '', ...on };
    case 'exit':
      return { type };
  }
}

/** A fresh id for a node of `type`: its type and the first free number. */
export function freshId(graph: JourneyGraph, type: NodeType): string {
  const base = type.replace('_', '-');
  for (let n = 1; ; n += 1) if (!(`${base}-${n}` in graph.nodes)) return `${base}-${n}`;
}

/** Puts a new node on the edge: the edge leads to it, and it leads where the edge led. Answers the graph and the new id. */
export function insertNode(graph: JourneyGraph, edge: Edge, type: NodeType, defaults: { scheduleUtr?: string; emailNode?: string }): { graph: JourneyGraph; id: string } {
  const id = freshId(graph, type);
  const next = targetOf(graph, edge);
  const nodes = { ...graph.nodes, [id]: newNode(type, type === 'exit' ? undefined : next, defaults) };
  if (!edge.from) return { graph: { start: id, nodes }, id };
  if (!graph.nodes[edge.from]) return { graph, id: '' };
  nodes[edge.from] = withExit(graph.nodes[edge.from], edge.key, id);
  return { graph: { start: graph.start, nodes }, id };
}

/** Replaces a node's settings, keeping where its exits lead (a split's by position). */
export function updateNode(graph: JourneyGraph, id: string, settings: JourneyNode): JourneyGraph {
  const old = graph.nodes[id];
  if (!old) return graph;
  let node = settings;
  if (old.type === settings.type) {
    const exits = exitsOf(old);
    if (settings.type === 'split' && old.type === 'split') {
      node = { ...settings, branches: settings.branches.map((b, i) => ({ percent: b.percent, ...(old.branches[i]?.next === undefined ? {} : { next: old.branches[i].next }) })) };
    } else {
      for (const exit of exits) node = withExit(node, exit.key, exit.id);
    }
  }
  return { start: graph.start, nodes: { ...graph.nodes, [id]: node } };
}

/** Takes a node out: what led to it leads where its first exit led. */
export function removeNode(graph: JourneyGraph, id: string): JourneyGraph {
  const old = graph.nodes[id];
  if (!old) return graph;
  const onward = exitsOf(old).find((e) => e.id !== undefined && e.id !== id)?.id;
  const nodes: Record<string, JourneyNode> = {};
  for (const [other, node] of Object.entries(graph.nodes)) {
    if (other === id) continue;
    let copy = node;
    for (const exit of exitsOf(node)) if (exit.id === id) copy = withExit(copy, exit.key, onward);
    nodes[other] = copy;
  }
  return { start: graph.start === id ? (onward ?? '') : graph.start, nodes };
}
