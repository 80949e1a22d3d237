import fs from 'node:fs';
import path from 'node:path';
import type { ListResult, Paging } from '../../../db/paging';
import { NotFoundError } from '../../../lib/errors';
import { lazy } from '../../../lib/lazy';
import { blankOpenPixels } from '../messages';
import { escapeHtml } from '../../../mail/template';
import { outboxFolder } from '../../../mail/transport';
import type { Ctx, ServiceDeps } from '../../context';
import type { TrackingService } from '../recipients';

export interface OutboxEntry {
  name: string;
  subject: string;
  from: string;
  to: string;
  date: string | null;
}

export interface OutboxMessage extends OutboxEntry {
  html: string | null;
  text: string | null;
  /** Every http(s) link of the message, so a verification link can be followed by a click. */
  links: string[];
}

/** The file names the outbox transport writes (a time stamp first, so names sort by time). */
const FILE_NAME = /^[\w.@-]+\.eml$/;
/** Only the Outbox page parses mail: a worker or an API-only process never loads the parser. */
const mailparser = lazy(() => require('mailparser') as typeof import('mailparser'));
const PARSE_OPTIONS = { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true, skipTextLinks: true } as const;

/**
 * The messages the outbox transport wrote for an account (when no SMTP_URL is set), newest
 * first, so the demo works end to end without a mail server. Each account reads only its
 * own folder.
 */
export function createOutboxService({ config, tracking }: Pick<ServiceDeps, 'config'> & { tracking: Pick<TrackingService, 'linkUrl'> }) {
  const folder = (ctx: Ctx) => outboxFolder(config.outboxDir, ctx.userId);

  async function read(ctx: Ctx, name: string) {
    if (!FILE_NAME.test(name)) throw new NotFoundError();
    try {
      return await mailparser().simpleParser(await fs.promises.readFile(path.join(folder(ctx), name)), PARSE_OPTIONS);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFoundError();
      throw err;
    }
  }

  const entry = (name: string, mail: Awaited<ReturnType<typeof read>>): OutboxEntry => ({
    name,
    subject: mail.subject ?? '',
    from: mail.from?.text ?? '',
    to: [mail.to ?? []].flat().map((a) => a.text).join(', '),
    date: mail.date ? mail.date.toISOString() : null,
  });

  const clickLink = new RegExp(`${config.baseUrl.replace(/[.*+?^$()|[\]{}\\]/g, '\\$&')}/c/([\\w.-]+)/([1-9]\\d{0,9})`, 'g');

  /** The stored target of each click-tracking link in `content`, by link (a forged one has none). */
  async function clickTargets(content: string): Promise<Map<string, string>> {
    const targets = new Map<string, string>();
    for (const [link, token, n] of content.matchAll(clickLink)) {
      if (targets.has(link)) continue;
      const url = await tracking.linkUrl(token, Number(n));
      if (url) targets.set(link, url);
    }
    return targets;
  }

  /** `content` with its click links replaced by their targets (written with `write`). */
  function untrack(content: string, targets: Map<string, string>, write: (url: string) => string): string {
    return targets.size === 0 ? content : content.replace(clickLink, (link) => (targets.has(link) ? write(targets.get(link)!) : link));
  }

  return {
    /** False when mail goes out through SMTP: nothing is kept then. */
    enabled: !config.smtpUrl,

    /**
     * One page of the messages, newest first; `search` keeps those whose subject, sender or
     * recipients contain it (any case). Without a search only the page's messages are parsed;
     * with one every message is, one at a time, keeping the matching entries only.
     */
    async list(ctx: Ctx, paging: Paging, search?: string): Promise<ListResult<OutboxEntry>> {
      const names = (await fs.promises.readdir(folder(ctx)).catch(() => [] as string[])).filter((n) => FILE_NAME.test(n)).sort().reverse();
      const from = (paging.page - 1) * paging.perPage;
      if (!search) {
        const rows = await Promise.all(names.slice(from, from + paging.perPage).map(async (name) => entry(name, await read(ctx, name))));
        return { rows, pagination: { page: paging.page, per_page: paging.perPage, total: names.length } };
      }
      const needle = search.toLowerCase();
      const rows: OutboxEntry[] = [];
      let total = 0;
      for (const name of names) {
        const found = entry(name, await read(ctx, name));
        if (![found.subject, found.from, found.to].some((text) => text.toLowerCase().includes(needle))) continue;
        if (total >= from && rows.length < paging.perPage) rows.push(found);
        total += 1;
      }
      return { rows, pagination: { page: paging.page, per_page: paging.perPage, total } };
    },

    async get(ctx: Ctx, name: string): Promise<OutboxMessage> {
      const mail = await read(ctx, name);
      // Reading it here is not an open, and following its links here is not a click.
      const targets = await clickTargets(`${mail.html ?? ''}\n${mail.text ?? ''}`);
      const html = typeof mail.html === 'string' ? untrack(blankOpenPixels(mail.html, config.baseUrl), targets, escapeHtml) : null;
      const text = mail.text ? untrack(mail.text, targets, (url) => url) : null;
      return { ...entry(name, mail), html, text, links: linksOf(html, text) };
    },
  };
}

/**
 * The links a reader can follow: the http(s) targets of the HTML's anchors, or, for a message
 * without HTML, the web addresses in its text. Not every URL-looking string: a namespace in
 * `<html xmlns="http://www.w3.org/1999/xhtml">` is no link, and a text link's closing bracket
 * or full stop is not part of it.
 */
function linksOf(html: string | null, text: string | null): string[] {
  const found = new Set<string>();
  if (html) {
    for (const match of html.matchAll(/<a\b[^>]*?\shref\s*=\s*(?:"([^"]*)"|'([^']*)')/gi)) {
      const link = (match[1] ?? match[2]).replace(/&amp;/g, '&').trim();
      if (/^https?:\/\//i.test(link)) found.add(link);
    }
  } else if (text) {
    for (const match of text.matchAll(/https?:\/\/[^\s<>"'\[\]]+/gi)) found.add(match[0].replace(/[.,;:!?)}]+$/, ''));
  }
  return [...found];
}

export type OutboxService = ReturnType<typeof createOutboxService>;
