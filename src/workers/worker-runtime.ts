import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Config } from '../config';
import type { Services } from '../services';
import { workerHooks } from './event-hooks';
import { createMailTransport } from '../mail/transport';
import { createHookDeliverer, HookDeliverer } from './hook-deliverer';
import { createHeartbeat, Heartbeat } from './heartbeat';
import { createMaintenanceJob, MaintenanceJob } from './maintenance';
import { createSendingWorker, SendingWorker, WorkerOptions } from './send-worker';
import { createDomainCheckJob, DomainCheckJob } from './domain-checks';

export interface WorkerRuntime {
  worker: SendingWorker;
  /** Delivers the outgoing webhooks' events; started and stopped with the worker. */
  hooks: HookDeliverer;
  /** Prunes old data by the retention settings; started and stopped with the worker. */
  maintenance: MaintenanceJob;
  /** Writes the worker's heartbeat row; started and stopped with the worker. */
  heartbeat: Heartbeat;
  /** Checks the sending domains' DNS daily; started and stopped with the worker. */
  domainChecks: DomainCheckJob;
  /** Stops the worker (finishing the messages in hand) and closes its SMTP pool. */
  close(): Promise<void>;
}

/** What the loops need of a booted service (boot's Runtime has these and more). */
export interface WorkerDeps {
  config: Config;
  db: Knex;
  logger: Logger;
  secret: string;
  services: Services;
}

/** The sending worker of a booted service, with its own pooled transport. */
export function createWorkerRuntime(runtime: WorkerDeps, options: WorkerOptions = {}): WorkerRuntime {
  const { config, db, logger, secret, services } = runtime;
  const transport = createMailTransport(config, logger, { maxConnections: config.smtpMaxConnections });
  const worker = createSendingWorker({ db, config, logger, secret, transport, hooks: workerHooks(services) }, { leaseMs: config.sendLeaseMs, expandBatch: config.sendExpandBatch, expandAhead: config.sendExpandAhead, ...options });
  // Mail the API or SMTP submission of this process queues wakes the urgent lane at once.
  const stopWaking = services.transactional.onQueued(() => worker.wakeUrgent());
  const hooks = createHookDeliverer({ db, config, logger, secret });
  const maintenance = createMaintenanceJob({ retention: services.retention, segments: services.segments, logger });
  const heartbeat = createHeartbeat({ health: services.health, logger }, worker.owner, 'worker');
  const domainChecks = createDomainCheckJob({ sendingDomains: services.sendingDomains, logger });
  return {
    worker,
    hooks,
    maintenance,
    heartbeat,
    domainChecks,
    async close() {
      stopWaking();
      await Promise.all([worker.stop(), hooks.stop(), maintenance.stop(), heartbeat.stop(), domainChecks.stop()]);
      transport.close();
    },
  };
}
