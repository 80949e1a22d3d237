import type { Runtime } from '../boot';
import { eventHooks } from './event-hooks';
import { createMailTransport } from './transport';
import { createSendingWorker, SendingWorker, WorkerOptions } from './worker';

export interface WorkerRuntime {
  worker: SendingWorker;
  /** Stops the worker (finishing the messages in hand) and closes its SMTP pool. */
  close(): Promise<void>;
}

/** The sending worker of a booted service, with its own pooled transport. */
export function createWorkerRuntime(runtime: Runtime, options: WorkerOptions = {}): WorkerRuntime {
  const { config, db, logger, secret, services } = runtime;
  const transport = createMailTransport(config, logger, { maxConnections: config.smtpMaxConnections });
  const worker = createSendingWorker({ db, config, logger, secret, transport, hooks: eventHooks(services.events) }, { leaseMs: config.sendLeaseMs, ...options });
  return {
    worker,
    async close() {
      await worker.stop();
      transport.close();
    },
  };
}
