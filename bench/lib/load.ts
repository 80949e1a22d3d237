import http from 'node:http';
import { processCpuSeconds } from './server';

/**
 * A small closed-loop load generator: `connections` keep-alive connections, each sending its next
 * GET as soon as the previous answer ended, for `seconds` (after `warmupSeconds` not counted).
 * Latencies go into 0.1 ms buckets, so memory does not grow with the number of requests.
 */
export interface LoadResult {
  requests: number;
  perSecond: number;
  p50: number;
  p95: number;
  p99: number;
  errors: number;
  /** CPU (user + system) of the process `cpuOf` names per counted request, in µs; NaN without one. */
  cpuMicrosPerRequest: number;
}

export async function load(
  port: number,
  path: string,
  headers: Record<string, string>,
  { connections = 50, seconds = 10, warmupSeconds = 2, cpuOf = undefined as number | undefined } = {},
): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const buckets = new Uint32Array(100_001); // 0.1 ms each, the last one ≥10 s
  let counting = false;
  let stop = false;
  let requests = 0;
  let errors = 0;
  const one = () =>
    new Promise<void>((resolve) => {
      const start = performance.now();
      const req = http.get({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
        res.resume();
        res.on('end', () => {
          if (counting) {
            if (res.statusCode !== 200) errors += 1;
            requests += 1;
            buckets[Math.min(100_000, Math.floor((performance.now() - start) * 10))] += 1;
          }
          resolve();
        });
      });
      req.on('error', () => {
        if (counting) errors += 1;
        resolve();
      });
    });
  const loop = async () => {
    while (!stop) await one();
  };
  const loops = Array.from({ length: connections }, loop);
  await new Promise((r) => setTimeout(r, warmupSeconds * 1000));
  counting = true;
  const cpu0 = cpuOf === undefined ? NaN : processCpuSeconds(cpuOf);
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  counting = false;
  const cpu = cpuOf === undefined ? NaN : processCpuSeconds(cpuOf) - cpu0;
  const took = (performance.now() - t0) / 1000;
  stop = true;
  await Promise.all(loops);
  agent.destroy();
  const percentile = (p: number) => {
    let seen = 0;
    for (let i = 0; i < buckets.length; i += 1) {
      seen += buckets[i];
      if (seen >= p * requests) return i / 10;
    }
    return Infinity;
  };
  return { requests, perSecond: requests / took, p50: percentile(0.5), p95: percentile(0.95), p99: percentile(0.99), errors, cpuMicrosPerRequest: (cpu * 1e6) / requests };
}
