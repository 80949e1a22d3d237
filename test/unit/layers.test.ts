import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/lib/paths';

/**
 * The layering of src/ (docs/architecture.md; DEVELOPERS.md, "Conventions"): imports only run down
 * boot → workers / app → api, web → http → services → mail → db → lib, with no circle.
 * config.ts and logger.ts sit with lib/; migrations/ and seeds/ are run by boot code (src/migrate.ts)
 * and use db/ and lib/.
 * Type-only imports count too: a type is a dependency.
 */
const SRC = path.join(PROJECT_ROOT, 'src');
const DATA = ['migrations', 'seeds'].map((d) => path.join(PROJECT_ROOT, d));
const BELOW_SERVICES = ['mail', 'db', 'lib'];
const MAY_IMPORT: Record<string, string[]> = {
  boot: ['boot', 'workers', 'app', 'api', 'web', 'http', 'services', 'data', ...BELOW_SERVICES],
  workers: ['workers', 'services', ...BELOW_SERVICES],
  app: ['app', 'api', 'web', 'http', 'services', ...BELOW_SERVICES],
  api: ['api', 'http', 'services', 'mail', 'lib'],
  web: ['web', 'http', 'services', 'mail', 'lib'],
  http: ['http', 'services', ...BELOW_SERVICES],
  services: ['services', ...BELOW_SERVICES],
  mail: ['mail', 'lib'],
  db: ['db', 'lib'],
  data: ['data', 'db', 'lib'],
  lib: ['lib'],
};

/**
 * Inside a layer, folders stand in an order of their own, top first: a file may import its own
 * part and the parts listed after it, never one listed before. Each entry is a subfolder or a file
 * directly in the folder. In services/, the composition root (index.ts) wires everything, shared/
 * holds what every part may use (state tables, the audit writer), and context.ts is the floor.
 */
const ORDER: Record<string, string[]> = {
  'src/services': ['index.ts', 'transactional', 'operations', 'maintenance', 'campaigns', 'journeys', 'audience', 'accounts', 'delivery', 'integrations', 'reference', 'shared', 'context.ts'],
  'src/services/delivery': ['sending', 'reports', 'recipients', 'feedback', 'messages', 'notices', 'ledger', 'relays', 'providers'],
};
/** Folders whose subfolders are rooms: from outside a room, only its index.ts is imported. */
const ROOMS = ['src/services/delivery'];

function layerOf(file: string): string {
  if (DATA.some((d) => file.startsWith(d + path.sep))) return 'data';
  const rel = path.relative(SRC, file).split(path.sep);
  if (rel.length === 1) {
    const name = rel[0].replace(/\.ts$/, '');
    if (name === 'app') return 'app';
    if (name === 'config' || name === 'logger') return 'lib';
    return 'boot';
  }
  if (!(rel[0] in MAY_IMPORT)) throw new Error(`src/${rel[0]}/ has no layer: add it to MAY_IMPORT`);
  return rel[0];
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

/** Every file of src/ that `file` imports (static, dynamic or `require`). */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\(\s*|^import\s+)'(\.{1,2}\/[^']+)'/gm)].map((m) => m[1]);
  return specs.map((spec) => {
    const base = path.resolve(path.dirname(file), spec);
    const found = [`${base}.ts`, path.join(base, 'index.ts')].find((f) => fs.existsSync(f));
    if (!found) throw new Error(`${path.relative(PROJECT_ROOT, file)} imports ${spec}, which is no TypeScript file`);
    return found;
  });
}

const files = [SRC, ...DATA].flatMap(sourceFiles);
const graph = new Map(files.map((f) => [f, importsOf(f)]));
const rel = (f: string) => path.relative(PROJECT_ROOT, f);

test('when a file of src/, migrations/ or seeds/ imports another then the import runs down the layers', () => {
  const upward: string[] = [];
  for (const [file, imports] of graph) {
    for (const target of imports) {
      if (!MAY_IMPORT[layerOf(file)].includes(layerOf(target))) upward.push(`${rel(file)} -> ${rel(target)}`);
    }
  }
  expect(upward).toEqual([]);
});

/** The part of `folder` that `file` sits in (its first path segment below it), or undefined when outside. */
function partOf(folder: string, file: string): string | undefined {
  const inside = path.relative(path.join(PROJECT_ROOT, folder), file);
  return inside.startsWith('..') ? undefined : inside.split(path.sep)[0];
}

test('when a file of a folder with an order imports another of it then the import runs down that order', () => {
  const upward: string[] = [];
  for (const [folder, order] of Object.entries(ORDER)) {
    for (const entry of fs.readdirSync(path.join(PROJECT_ROOT, folder))) {
      if (!order.includes(entry) && (entry.endsWith('.ts') || fs.statSync(path.join(PROJECT_ROOT, folder, entry)).isDirectory())) {
        throw new Error(`${folder}/${entry} has no place: add it to ORDER['${folder}']`);
      }
    }
    for (const [file, imports] of graph) {
      const from = partOf(folder, file);
      if (from === undefined) continue;
      for (const target of imports) {
        const to = partOf(folder, target);
        if (to !== undefined && order.indexOf(to) < order.indexOf(from)) upward.push(`${rel(file)} -> ${rel(target)}`);
      }
    }
  }
  expect(upward).toEqual([]);
});

test('when a file imports from a room of another then it goes through the room\'s index.ts', () => {
  const sideDoors: string[] = [];
  for (const folder of ROOMS) {
    for (const [file, imports] of graph) {
      for (const target of imports) {
        const room = partOf(folder, target);
        if (room === undefined || partOf(folder, file) === room) continue;
        if (target !== path.join(PROJECT_ROOT, folder, room, 'index.ts')) sideDoors.push(`${rel(file)} -> ${rel(target)}`);
      }
    }
  }
  expect(sideDoors).toEqual([]);
});

test('when the imports of src/, migrations/ and seeds/ are followed then no file reaches itself (no circle)', () => {
  // Tarjan's strongly connected components: any component of more than one file is a circle.
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string) => {
    order.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!order.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, order.get(w)!));
    }
    if (low.get(v) === order.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(rel(w));
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) circles.push(component.sort());
    }
  };
  for (const f of files) if (!order.has(f)) visit(f);
  expect(circles).toEqual([]);
});
