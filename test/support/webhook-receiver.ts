import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One event as a receiver sees it: a request's own, or one entry of a batch's `data.events`. */
export interface ReceivedEvent {
  id: string;
  type: string;
  account_id: number;
  data: Record<string, unknown>;
}

export interface WebhookReceiver {
  url: string;
  /** The signing secret the receiver verifies with (set it once the endpoint is saved). */
  secret: string;
  /** Bodies of the requests it answered 2xx, in order. */
  accepted: Array<{ webhookId: string; body: Record<string, unknown> }>;
  /** Every request, with the status it was answered. */
  requests: Array<{ webhookId: string; status: number }>;
  /** Requests whose signature did not verify. */
  forged: number;
  /** The most requests it was answering at one time. */
  maxInFlight: number;
  /** Each event accepted (batches flattened), in the order received. */
  events(): ReceivedEvent[];
  close(): Promise<void>;
}

export interface ReceiverOptions {
  /** The answer to a request: 500 the first time a webhook-id comes, by default 200. */
  answer?: (webhookId: string, seenBefore: boolean) => number;
  /** How long it takes to answer, in ms. */
  delayMs?: number;
}

/**
 * A webhook receiver on 127.0.0.1 that verifies every request with the `standardwebhooks`
 * package (the specification's own implementation), as a customer's endpoint would.
 */
export async function startWebhookReceiver(options: ReceiverOptions = {}): Promise<WebhookReceiver> {
  const seen = new Set<string>();
  let inFlight = 0;
  const receiver = {
    url: '',
    secret: '',
    accepted: [],
    requests: [],
    forged: 0,
    maxInFlight: 0,
  } as unknown as WebhookReceiver;

  const server = http.createServer((req, res) => {
    inFlight += 1;
    receiver.maxInFlight = Math.max(receiver.maxInFlight, inFlight);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const webhookId = String(req.headers['webhook-id'] ?? '');
      let status: number;
      let payload: Record<string, unknown> | undefined;
      try {
        payload = new Webhook(receiver.secret).verify(body, req.headers as Record<string, string>) as Record<string, unknown>;
        status = options.answer ? options.answer(webhookId, seen.has(webhookId)) : 200;
      } catch {
        receiver.forged += 1;
        status = 401;
      }
      seen.add(webhookId);
      setTimeout(() => {
        receiver.requests.push({ webhookId, status });
        if (status >= 200 && status < 300 && payload) receiver.accepted.push({ webhookId, body: payload });
        inFlight -= 1;
        res.writeHead(status).end();
      }, options.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  receiver.events = () =>
    receiver.accepted.flatMap(({ body }) => {
      const data = body.data as { events?: Array<{ id: string; data: Record<string, unknown> }> };
      const common = { type: String(body.type), account_id: Number(body.account_id) };
      return Array.isArray(data.events) && ['message.delivered', 'message.opened', 'message.clicked'].includes(common.type)
        ? data.events.map((e) => ({ ...common, id: e.id, data: e.data }))
        : [{ ...common, id: String(body.id), data: body.data as Record<string, unknown> }];
    });
  receiver.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return receiver;
}

/** 500 the first time a webhook-id comes, 200 after. */
export const failFirstTime = (_id: string, seenBefore: boolean) => (seenBefore ? 200 : 500);
