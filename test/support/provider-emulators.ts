import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { simpleParser, ParsedMail } from 'mailparser';
import addressparser from 'nodemailer/lib/addressparser';

/**
 * In-process emulators of the providers' sending APIs, answering as each documents: the paths,
 * the authentication, the success bodies and ids, and the error bodies of a refused key, a
 * rate limit (429), a server error and a policy refusal.
 *
 * - SES v2: `POST /v2/email/outbound-emails` (SigV4, service `ses`) → 200 `{"MessageId"}`;
 *   errors as REST-JSON with `x-amzn-ErrorType` (TooManyRequestsException 429, MessageRejected 400).
 * - SendGrid v3: `POST /v3/mail/send` (Bearer key) → 202, empty body, `X-Message-Id`;
 *   errors `{"errors":[{"message","field","help"}]}`; `from` is `{"email", "name"}` and the name
 *   is shown as given (a 400 without `from.email`); copies in `personalizations[].cc/bcc` as
 *   `{email}` (a 400 when an address is in `to`, `cc` or `bcc` twice), files in `attachments` as
 *   `{content (base64), filename, type}` (a 400 without `content` or `filename`).
 * - Postmark: `From` is an RFC 5322 address (`"Name" <address>`), so its name is parsed.
 * - Postmark: `POST /email` (`X-Postmark-Server-Token`) → 200 `{To, SubmittedAt, MessageID, ErrorCode: 0, Message: "OK"}`;
 *   errors `{"ErrorCode", "Message"}` (10 bad token 401, 300 invalid request 422, 429 rate limit);
 *   `Cc` and `Bcc` are comma-separated addresses, `Attachments` `[{Name, Content (base64), ContentType}]`
 *   (300 without `Name`, `Content` or `ContentType`).
 * - Mailgun: `POST /v3/<domain>/messages.mime` (basic `api:<key>`, multipart `to` and `message`)
 *   → 200 `{"id":"<…@domain>","message":"Queued. Thank you."}`; 401 `Forbidden`; errors `{"message"}`.
 */
export type ProviderKind = 'ses' | 'sendgrid' | 'postmark' | 'mailgun';

/**
 * How the emulator answers the next sends: as usual, with one of the documented refusals, or
 * `hang-up`: it reads the whole request and drops the connection without an answer.
 */
export type Behaviour = 'ok' | 'rate-limited' | 'server-error' | 'policy' | 'hang-up';

export interface ReceivedApiMessage {
  to: string;
  subject: string;
  html: string;
  /** The From's display name as the provider puts it in the mail it sends. */
  fromName: string;
  /** The MIME message (SES, Mailgun) parsed, or the JSON parts' headers (SendGrid, Postmark). */
  headers: Record<string, string>;
  providerId: string;
  /** Copies and blind copies as the JSON APIs take them (SendGrid, Postmark). */
  cc?: string[];
  bcc?: string[];
  /** Files as the JSON APIs take them, decoded (SendGrid, Postmark). */
  attachments?: Array<{ filename: string; contentType: string; content: Buffer }>;
  parsed?: ParsedMail;
  /** The MIME message as the API received it (SES, Mailgun), for checking its signature. */
  raw?: Buffer;
}

export interface ProviderEmulator {
  kind: ProviderKind;
  url: string;
  /** The API key a relay must use (SES: `ACCESS_KEY_ID:SECRET`). */
  key: string;
  messages: ReceivedApiMessage[];
  /** Requests refused, with the status answered. */
  refused: Array<{ path: string; status: number }>;
  /** Sends read whole and left without an answer (`hang-up`). */
  hungUp: string[];
  behaviour: Behaviour;
  close(): Promise<void>;
}

const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

const hmac = (key: crypto.BinaryLike, text: string) => crypto.createHmac('sha256', key).update(text).digest();
const sha256 = (data: crypto.BinaryLike) => crypto.createHash('sha256').update(data).digest('hex');

/** Checks an AWS Signature Version 4 `Authorization` header against the secret (service `ses`). */
function sigV4Valid(req: http.IncomingMessage, body: Buffer, accessKeyId: string, secret: string): boolean {
  const auth = String(req.headers.authorization ?? '');
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/ses\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(auth);
  if (!m || m[1] !== accessKeyId) return false;
  const [, , date, region, signedHeaders, signature] = m;
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  const url = new URL(req.url ?? '/', 'http://x');
  const query = [...url.searchParams.entries()].map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).sort().join('&');
  const names = signedHeaders.split(';');
  const canonicalHeaders = names.map((n) => `${n}:${String(req.headers[n] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const payloadHash = String(req.headers['x-amz-content-sha256'] ?? sha256(body));
  const canonical = [req.method, url.pathname, query, canonicalHeaders, signedHeaders, payloadHash].join('\n');
  const scope = `${date}/${region}/ses/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), 'ses'), 'aws4_request');
  return crypto.timingSafeEqual(Buffer.from(hmac(key, toSign).toString('hex')), Buffer.from(signature));
}

/** The parts of a multipart/form-data body (Mailgun), by field name. */
function multipart(req: http.IncomingMessage, body: Buffer): Map<string, Buffer[]> {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(String(req.headers['content-type'] ?? ''));
  const fields = new Map<string, Buffer[]>();
  if (!boundary) return fields;
  const delimiter = `--${boundary[1] ?? boundary[2]}`;
  for (const part of body.toString('latin1').split(delimiter).slice(1, -1)) {
    const split = part.indexOf('\r\n\r\n');
    const head = part.slice(0, split);
    const name = /name="([^"]+)"/.exec(head)?.[1];
    if (!name) continue;
    const value = Buffer.from(part.slice(split + 4, part.length - 2), 'latin1');
    fields.set(name, [...(fields.get(name) ?? []), value]);
  }
  return fields;
}

export async function startProviderEmulator(kind: ProviderKind): Promise<ProviderEmulator> {
  const key = kind === 'ses' ? `AKIAEMULATOR${crypto.randomBytes(4).toString('hex').toUpperCase()}:${crypto.randomBytes(20).toString('base64')}` : `${kind === 'sendgrid' ? 'SG.' : ''}${crypto.randomBytes(16).toString('hex')}`;
  const emulator: ProviderEmulator = { kind, url: '', key, messages: [], refused: [], hungUp: [], behaviour: 'ok', close: async () => undefined };

  const refuse = (res: http.ServerResponse, path: string, status: number, body: unknown, headers: Record<string, string> = {}) => {
    emulator.refused.push({ path, status });
    if (typeof body === 'string') {
      res.writeHead(status, { 'Content-Type': 'text/plain', ...headers });
      res.end(body);
    } else json(res, status, body, headers);
  };

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const b = emulator.behaviour;
    if (kind === 'ses') {
      const [id, secret] = key.split(':');
      const error = (status: number, type: string, message: string) => refuse(res, path, status, { message }, { 'x-amzn-ErrorType': `${type}:http://internal.amazon.com/coral/com.amazonaws.sesv2/` });
      if (!sigV4Valid(req, body, id, secret)) return error(403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.');
      if (req.method === 'GET' && path === '/v2/email/account') return json(res, 200, { SendingEnabled: true, ProductionAccessEnabled: true, SendQuota: { Max24HourSend: 50000, MaxSendRate: 14, SentLast24Hours: emulator.messages.length } });
      if (req.method !== 'POST' || path !== '/v2/email/outbound-emails') return error(404, 'NotFoundException', 'Not Found');
      if (b === 'rate-limited') return error(429, 'TooManyRequestsException', 'Maximum sending rate exceeded.');
      if (b === 'server-error') return error(500, 'InternalFailure', 'The request processing has failed because of an unknown error, exception or failure.');
      if (b === 'policy') return error(400, 'MessageRejected', 'Email address is not verified. The following identities failed the check in region US-EAST-1: news@acme.test');
      const input = JSON.parse(body.toString('utf8'));
      const raw = Buffer.from(input.Content.Raw.Data, 'base64');
      const parsed = await simpleParser(raw);
      const providerId = `0100019${crypto.randomBytes(12).toString('hex')}-000000`;
      emulator.messages.push({ fromName: parsed.from?.value[0]?.name ?? '', to: input.Destination?.ToAddresses?.[0], subject: parsed.subject ?? '', html: String(parsed.html || ''), headers: headerMap(parsed), providerId, parsed, raw });
      return json(res, 200, { MessageId: providerId });
    }
    if (kind === 'sendgrid') {
      if (req.headers.authorization !== `Bearer ${key}`) return refuse(res, path, 401, { errors: [{ field: null, message: 'The provided authorization grant is invalid, expired, or revoked', help: null }] });
      if (req.method === 'GET' && path === '/v3/scopes') return json(res, 200, { scopes: ['mail.send'] });
      if (req.method !== 'POST' || path !== '/v3/mail/send') return refuse(res, path, 404, { errors: [{ field: null, message: 'resource not found' }] });
      if (b === 'rate-limited') return refuse(res, path, 429, { errors: [{ field: null, message: 'too many requests' }] }, { 'X-RateLimit-Limit': '600', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(Math.floor(Date.now() / 1000) + 60) });
      if (b === 'server-error') return refuse(res, path, 500, { errors: [{ field: null, message: 'internal server error' }] });
      if (b === 'policy') return refuse(res, path, 403, { errors: [{ field: 'from', message: 'The from address does not match a verified Sender Identity. Mail cannot be sent until this error is resolved.', help: 'https://sendgrid.com/docs/for-developers/sending-email/sender-identity/' }] });
      const input = JSON.parse(body.toString('utf8'));
      if (typeof input.from?.email !== 'string' || !input.from.email) {
        return refuse(res, path, 400, { errors: [{ field: 'from.email', message: 'The from object must be provided for every email send. It is an object that requires the email parameter, but may also contain a name parameter.', help: 'http://sendgrid.com/docs/API_Reference/Web_API_v3/Mail/errors.html#message.from' }] });
      }
      const personalization = input.personalizations?.[0] ?? {};
      const emails = (list: unknown) => (Array.isArray(list) ? list.map((e: { email: string }) => String(e.email)) : []);
      const everyone = [...emails(personalization.to), ...emails(personalization.cc), ...emails(personalization.bcc)].map((e) => e.toLowerCase());
      if (new Set(everyone).size !== everyone.length) {
        return refuse(res, path, 400, { errors: [{ field: 'personalizations.0', message: 'Each email address in the personalization block should be unique between to, cc, and bcc. We found the first duplicate instance of [' + everyone.find((e, i) => everyone.indexOf(e) !== i) + '] in the personalizations.0.to field.', help: 'http://sendgrid.com/docs/API_Reference/Web_API_v3/Mail/errors.html#message.recipient-errors' }] });
      }
      const files = Array.isArray(input.attachments) ? input.attachments : [];
      if (files.some((a: { content?: string; filename?: string }) => !a.content || !a.filename)) {
        return refuse(res, path, 400, { errors: [{ field: 'attachments.0.content', message: 'The attachment content is required.', help: 'http://sendgrid.com/docs/API_Reference/Web_API_v3/Mail/errors.html#message.attachments.content' }] });
      }
      const providerId = crypto.randomBytes(11).toString('base64url');
      emulator.messages.push({
        cc: emails(personalization.cc),
        bcc: emails(personalization.bcc),
        attachments: files.map((a: { content: string; filename: string; type?: string }) => ({ filename: a.filename, contentType: String(a.type ?? ''), content: Buffer.from(a.content, 'base64') })),
        fromName: String(input.from.name ?? ''),
        to: input.personalizations?.[0]?.to?.[0]?.email,
        subject: input.subject,
        html: input.content?.find((c: { type: string }) => c.type === 'text/html')?.value ?? '',
        headers: { ...input.headers, ...(input.custom_args ? { 'custom_args': JSON.stringify(input.custom_args) } : {}) },
        providerId,
      });
      res.writeHead(202, { 'X-Message-Id': providerId });
      return void res.end();
    }
    if (kind === 'postmark') {
      if (req.headers['x-postmark-server-token'] !== key) return refuse(res, path, 401, { ErrorCode: 10, Message: 'The Server Token you provided in the X-Postmark-Server-Token request header was invalid. Please verify that you are using a valid token.' });
      if (req.method === 'GET' && path === '/server') return json(res, 200, { ID: 1, Name: 'Emulated', ApiTokens: [key] });
      if (req.method !== 'POST' || path !== '/email') return refuse(res, path, 404, { ErrorCode: 404, Message: 'Not Found' });
      if (b === 'rate-limited') return refuse(res, path, 429, { ErrorCode: 429, Message: 'Rate limit exceeded.' });
      if (b === 'server-error') return refuse(res, path, 500, { ErrorCode: 100, Message: 'Maintenance' });
      const input = JSON.parse(body.toString('utf8'));
      if (b === 'policy') return refuse(res, path, 422, { ErrorCode: 400, Message: `The 'From' address you supplied (${input.From}) is not a Sender Signature on your account. Please add and confirm this address in order to be able to use it in the 'From' field of your messages.` });
      const files = Array.isArray(input.Attachments) ? input.Attachments : [];
      if (files.some((a: { Name?: string; Content?: string; ContentType?: string }) => !a.Name || !a.Content || !a.ContentType)) {
        return refuse(res, path, 422, { ErrorCode: 300, Message: 'Invalid attachment: Name, Content and ContentType are required.' });
      }
      const list = (value: unknown) => (value ? addressparser(String(value)).map((a) => a.address ?? '') : []);
      const providerId = crypto.randomUUID();
      const headers = Object.fromEntries((input.Headers ?? []).map((h: { Name: string; Value: string }) => [h.Name, h.Value]));
      emulator.messages.push({ fromName: addressparser(String(input.From ?? ''))[0]?.name ?? '', to: input.To, subject: input.Subject, html: input.HtmlBody, cc: list(input.Cc), bcc: list(input.Bcc), attachments: files.map((a: { Name: string; Content: string; ContentType: string }) => ({ filename: a.Name, contentType: a.ContentType, content: Buffer.from(a.Content, 'base64') })), headers: { ...headers, Metadata: JSON.stringify(input.Metadata ?? {}), MessageStream: input.MessageStream }, providerId });
      return json(res, 200, { To: input.To, SubmittedAt: new Date().toISOString(), MessageID: providerId, ErrorCode: 0, Message: 'OK' });
    }
    // Mailgun
    if (req.headers.authorization !== `Basic ${Buffer.from(`api:${key}`).toString('base64')}`) return refuse(res, path, 401, 'Forbidden');
    if (req.method === 'GET' && /^\/v[34]\/domains$/.test(path)) return json(res, 200, { total_count: 1, items: [{ name: 'acme.test', state: 'active' }] });
    const send = /^\/v3\/([^/]+)\/messages\.mime$/.exec(path);
    if (req.method !== 'POST' || !send) return refuse(res, path, 404, { message: 'Not Found' });
    if (b === 'rate-limited') return refuse(res, path, 429, { message: 'Too many requests' });
    if (b === 'server-error') return refuse(res, path, 500, { message: 'Internal Server Error' });
    if (b === 'policy') return refuse(res, path, 403, { message: `Domain ${send[1]} is not allowed to send: Free accounts are for test purposes only.` });
    const fields = multipart(req, body);
    const raw = fields.get('message')?.[0] ?? Buffer.alloc(0);
    const parsed = await simpleParser(raw);
    const providerId = `<${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}.${crypto.randomBytes(8).toString('hex')}@${send[1]}>`;
    emulator.messages.push({ fromName: parsed.from?.value[0]?.name ?? '', to: String(fields.get('to')?.[0] ?? ''), subject: parsed.subject ?? '', html: String(parsed.html || ''), headers: headerMap(parsed), providerId, parsed, raw });
    return json(res, 200, { id: providerId, message: 'Queued. Thank you.' });
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (emulator.behaviour === 'hang-up' && req.method === 'POST') {
        emulator.hungUp.push(new URL(req.url ?? '/', 'http://x').pathname);
        return void req.socket.destroy();
      }
      handle(req, res, Buffer.concat(chunks)).catch((err) => json(res, 500, { message: String(err) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  emulator.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  emulator.close = () => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return emulator;
}

function headerMap(parsed: ParsedMail): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of parsed.headerLines) out[line.key] = line.line.slice(line.line.indexOf(':') + 1).trim();
  return out;
}
