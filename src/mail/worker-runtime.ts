import type { Runtime } from '../boot';
import { workerHooks } from './event-hooks';
import { createMailTransport } from './transport';
import { createHookDeliverer, HookDeliverer } from './hook-deliverer';
import { createSendingWorker, SendingWorker, WorkerOptions } from './worker';

export interface WorkerRuntime {
  worker: SendingWorker;
  /** Delivers the outgoing webhooks' events; started and stopped with the worker. */
  hooks: HookDeliverer;
  /** Stops the worker (finishing the messages in hand) and closes its SMTP pool. */
  close(): Promise<void>;
}

/** The sending worker of a booted service, with its own pooled transport. */
export function createWorkerRuntime(runtime: Runtime, options: WorkerOptions = {}): WorkerRuntime {
  const { config, db, logger, secret, services } = runtime;
  const transport = createMailTransport(config, logger, { maxConnections: config.smtpMaxConnections });
  const worker = createSendingWorker({ db, config, logger, secret, transport, hooks: workerHooks(services) }, { leaseMs: config.sendLeaseMs, ...options });
  const hooks = createHookDeliverer({ db, config, logger, secret });
  return {
    worker,
    hooks,
    async close() {
      await Promise.all([worker.stop(), hooks.stop()]);
      transport.close();
    },
  };
}
