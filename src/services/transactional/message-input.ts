import { CAMPAIGN_LIMITS, LIMITS, TRANSACTIONAL_LIMITS as L } from '../../lib/constants';
import type { FieldErrors } from '../../lib/errors';
import { hasControlCharacters, isBlank, isEmail, isInteger, isScalar, messages, toFlag } from '../../lib/validation';

/** One attachment as the message carries it (content still base64, checked). */
export interface AttachmentInput {
  filename: string;
  content: string;
  content_type?: string;
}

/** A transactional message's request, checked and in one shape whatever the encoding. */
export interface MessageInput {
  to: string[];
  senderId?: number;
  from?: string;
  subject?: string;
  html?: string;
  text?: string;
  templateId?: number;
  data: Record<string, unknown>;
  cc: string[];
  bcc: string[];
  replyTo?: string;
  headers: Record<string, string>;
  attachments: AttachmentInput[];
  tags: string[];
  trackOpens: 0 | 1;
  trackClicks: 0 | 1;
  sendAt?: Date;
}

/**
 * Header names a message may set: `X-` headers, and the list headers, which transactional mail
 * carries only when the caller gives them (a receipt is no list).
 */
const HEADER_NAME = /^(X-[A-Za-z0-9-]+|List-Unsubscribe|List-Unsubscribe-Post)$/i;
const BASE64 = /^[A-Za-z0-9+/\r\n]*={0,2}\s*$/;
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})$/;

function listOf(value: unknown): unknown[] {
  if (value === undefined || value === null || value === '') return [];
  return Array.isArray(value) ? value : [value];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Decoded size of base64 text without decoding it. */
export function base64Bytes(content: string): number {
  const clean = content.replace(/[\r\n\s]/g, '');
  return Math.floor((clean.length * 3) / 4) - (clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0);
}

/**
 * Checks one message's body; errors are named `prefix + field` (`messages[3].to` in a batch).
 * Answers the message, or undefined when `errors` got any of its own.
 */
export function checkMessage(body: unknown, errors: FieldErrors, prefix = '', now = new Date()): MessageInput | undefined {
  const before = Object.keys(errors).length;
  const add = (name: string, message: string) => {
    const key = prefix + name;
    (errors[key] ??= []).push(message);
  };
  if (!isObject(body)) {
    add('', 'Each message must be an object.');
    return undefined;
  }
  const b = body;
  const text = (name: string, max: number): string | undefined => {
    const v = b[name];
    if (isBlank(v)) return undefined;
    if (typeof v !== 'string' && typeof v !== 'number') return void add(name, messages.string(name));
    const s = String(v);
    if (s.length > max) return void add(name, messages.max(name, max));
    if (name !== 'html' && name !== 'text' && hasControlCharacters(s)) return void add(name, messages.control(name));
    return s;
  };
  const addresses = (name: string, max: number): string[] => {
    const list = listOf(b[name]).flatMap((v) => (typeof v === 'string' ? v.split(',') : [v]));
    if (list.some((v) => typeof v !== 'string')) return add(name, messages.array(name)), [];
    const trimmed = (list as string[]).map((v) => v.trim()).filter(Boolean);
    if (trimmed.length > max) return add(name, messages.addressMax(name, max)), [];
    const invalid = trimmed.filter((v) => !isEmail(v) || v.length > 320);
    if (invalid.length) return add(name, messages.addressInvalid(name, invalid)), [];
    return trimmed;
  };

  const to = addresses('to', L.recipients);
  if (!to.length && !errors[prefix + 'to']) add('to', messages.required('to'));
  const cc = addresses('cc', L.recipients);
  const bcc = addresses('bcc', L.recipients);

  let senderId: number | undefined;
  if (!isBlank(b.sender_id)) {
    if (!isInteger(b.sender_id) || Number(b.sender_id) < 1 || Number(b.sender_id) > LIMITS.maxId) add('sender_id', messages.integer('sender_id'));
    else senderId = Number(b.sender_id);
  }
  const from = text('from', 320);
  if (from !== undefined && !isEmail(from)) add('from', messages.email('from'));
  if (senderId === undefined && from === undefined && !errors[prefix + 'sender_id'] && !errors[prefix + 'from']) add('sender_id', 'The sender id field is required when from is not present.');

  let templateId: number | undefined;
  if (!isBlank(b.template_id)) {
    if (!isInteger(b.template_id) || Number(b.template_id) < 1 || Number(b.template_id) > LIMITS.maxId) add('template_id', messages.integer('template_id'));
    else templateId = Number(b.template_id);
  }
  const subject = text('subject', CAMPAIGN_LIMITS.subject);
  const html = text('html', LIMITS.text * 16);
  const plain = text('text', LIMITS.text * 16);
  if (templateId === undefined && b.template_id === undefined) {
    if (subject === undefined && !errors[prefix + 'subject']) add('subject', messages.required('subject'));
    if (html === undefined && plain === undefined && !errors[prefix + 'html'] && !errors[prefix + 'text']) add('html', 'The html field is required when text is not present.');
  }
  let data: Record<string, unknown> = {};
  if (b.data !== undefined && b.data !== null && b.data !== '') {
    if (!isObject(b.data)) add('data', 'The data must be an object.');
    else data = b.data;
  }

  const replyTo = text('reply_to', 320);
  if (replyTo !== undefined && !isEmail(replyTo)) add('reply_to', messages.email('reply_to'));

  const headers: Record<string, string> = {};
  if (b.headers !== undefined && b.headers !== null && b.headers !== '') {
    if (!isObject(b.headers)) add('headers', 'The headers must be an object of header names and values.');
    else {
      for (const [name, value] of Object.entries(b.headers)) {
        if (!HEADER_NAME.test(name)) add(`headers.${name}`, `Only X- headers (and List-Unsubscribe) may be set; ${name.slice(0, 64)} may not.`);
        else if (!isScalar(value) || /[\r\n]/.test(String(value)) || hasControlCharacters(String(value)) || String(value).length > 998) add(`headers.${name}`, `The ${name} header must be one line of text.`);
        else headers[name] = String(value);
      }
    }
  }

  const attachments: AttachmentInput[] = [];
  const given = listOf(b.attachments);
  if (given.length > L.attachments) add('attachments', messages.arrayMax('attachments', L.attachments));
  else {
    let bytes = 0;
    given.forEach((a, i) => {
      const at = `attachments[${i}]`;
      if (!isObject(a)) return add(at, 'Each attachment must be an object with a filename and a base64 content.');
      const filename = typeof a.filename === 'string' ? a.filename.trim() : '';
      if (!filename) add(`${at}.filename`, messages.required('filename'));
      else if (filename.length > 255 || hasControlCharacters(filename) || /[\r\n]/.test(filename)) add(`${at}.filename`, messages.max('filename', 255));
      const content = typeof a.content === 'string' ? a.content : '';
      if (!content) add(`${at}.content`, messages.required('content'));
      else if (!BASE64.test(content)) add(`${at}.content`, 'The content must be base64.');
      const type = a.content_type;
      if (type !== undefined && (typeof type !== 'string' || !/^[\w.+-]+\/[\w.+-]+$/.test(type))) add(`${at}.content_type`, messages.format('content_type'));
      bytes += content ? base64Bytes(content) : 0;
      if (filename && content) attachments.push({ filename, content: content.replace(/\s/g, ''), ...(typeof type === 'string' ? { content_type: type } : {}) });
    });
    if (bytes > L.attachmentBytes) add('attachments', `The attachments may not be larger than ${L.attachmentBytes / 1024 / 1024} MiB in all.`);
  }

  const tags: string[] = [];
  const givenTags = listOf(b.tags);
  if (givenTags.length > L.tags) add('tags', messages.arrayMax('tags', L.tags));
  else {
    for (const tag of givenTags) {
      if (typeof tag !== 'string' || !tag.trim()) add('tags', 'Each tag must be a string.');
      else if (tag.length > L.tagLength || hasControlCharacters(tag)) add('tags', `Each tag may not be greater than ${L.tagLength} characters.`);
      else if (!tags.includes(tag.trim())) tags.push(tag.trim());
    }
  }

  const flag = (name: string): 0 | 1 => {
    if (isBlank(b[name])) return 0;
    const v = isScalar(b[name]) ? toFlag(b[name]) : undefined;
    if (v === undefined) add(name, `The ${name.replace(/_/g, ' ')} must be 0 or 1.`);
    return v ?? 0;
  };
  const trackOpens = flag('track_opens');
  const trackClicks = flag('track_clicks');

  let sendAt: Date | undefined;
  if (!isBlank(b.send_at)) {
    const s = typeof b.send_at === 'string' ? b.send_at : '';
    const at = ISO_WITH_OFFSET.test(s) ? new Date(s) : undefined;
    if (!at || Number.isNaN(at.getTime())) add('send_at', 'The send at must be an ISO 8601 date and time with its offset (2026-12-01T09:00:00+01:00).');
    else if (at.getTime() > now.getTime() + L.sendAtDays * 86_400_000) add('send_at', `The send at may not be more than ${L.sendAtDays} days ahead.`);
    else if (at.getTime() > now.getTime()) sendAt = at;
  }

  if (Object.keys(errors).length > before) return undefined;
  return { to, senderId, from, subject, html, text: plain, templateId, data, cc, bcc, replyTo, headers, attachments, tags, trackOpens, trackClicks, sendAt };
}
