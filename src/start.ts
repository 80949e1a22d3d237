import { createHash } from 'node:crypto';
import fs from 'node:fs';
import Module, { createRequire } from 'node:module';
import path from 'node:path';
import { debuglog } from 'node:util';
import vm from 'node:vm';
import { STARTED_EVENT } from './lib/constants';

/**
 * The entry of `npm start` (and of `npm run web`, `worker`, `inbound`): runs the bundled server,
 * dist/bundle/server.js (made by `npm run build`, see scripts/bundle.js), compiled from V8's code
 * cache when one matches. The first start after a build compiles the bundle, and a little later
 * writes the cache beside it (one per node version and set of node flags); every later start
 * skips compiling. Without a cache (a read-only folder, say) the server starts all the same.
 */
const BUNDLE = path.join(__dirname, '..', 'bundle', 'server.js');
/**
 * Soon after start-up is over (the server emits STARTED_EVENT once it listens and its worker
 * runs), while V8 still holds the bytecode of everything start-up compiled: V8 drops the
 * bytecode of functions that have not run for a few full collections, so a cache written later
 * under load (a benchmark, a big send) held a third of it (1.0 against 2.7 MB), and starts from
 * it took 0.26 s instead of 0.18 s. Counted from the start of the process instead, a first
 * start still seeding a new PostgreSQL database (~2.5 s) wrote its cache before it listened.
 */
const CACHE_AFTER_MS = 2_000;
/** NODE_DEBUG=campaign-start tells how the server was compiled. */
const debug = debuglog('campaign-start');

function cachePath(): string {
  // One per role too: a worker deserialising a cache written by a web process held the bytecode
  // of the API and dashboard it never runs.
  const key = createHash('sha256').update(`${process.version} ${process.execArgv.join(' ')} ${process.argv.slice(2).join(' ')}`).digest('hex').slice(0, 12);
  return `${BUNDLE}.${key}.cache`;
}

function readCache(file: string): Buffer | undefined {
  try {
    return fs.readFileSync(file);
  } catch {
    return undefined;
  }
}

function writeCache(script: vm.Script, file: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(temporary, script.createCachedData());
    fs.renameSync(temporary, file);
  } catch (err) {
    fs.rmSync(temporary, { force: true });
    process.stderr.write(`The start cache could not be written (${(err as Error).message}); starts will compile the server each time.\n`);
  }
}

/**
 * Compiles the bundle, from the cache when it matches. The cache's bytes are dropped on return,
 * before the server runs: held on through start-up they would outlive the young generation
 * and stay in memory until the first full collection.
 */
function compile(cacheFile: string): { script: vm.Script; fromCache: boolean } {
  // The bundle is ASCII only: read as Latin-1 it becomes a one-byte string.
  const source = fs.readFileSync(BUNDLE, 'latin1');
  const cachedData = readCache(cacheFile);
  const script = new vm.Script(Module.wrap(source), { filename: BUNDLE, cachedData });
  return { script, fromCache: cachedData !== undefined && !script.cachedDataRejected };
}

function run(): void {
  if (!fs.existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: run npm run build`);
  const cacheFile = cachePath();
  const { script, fromCache } = compile(cacheFile);
  debug(fromCache ? 'compiled the server from its cache %s' : 'compiled the server without a cache (%s is written later)', cacheFile);
  const bundleModule = new Module(BUNDLE, module);
  bundleModule.filename = BUNDLE;
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper.call(bundleModule.exports, bundleModule.exports, createRequire(BUNDLE), bundleModule, BUNDLE, path.dirname(BUNDLE));
  if (!fromCache) process.once(STARTED_EVENT, () => setTimeout(() => writeCache(script, cacheFile), CACHE_AFTER_MS).unref());
}

run();
