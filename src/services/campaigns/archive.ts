import { SINGLE_SEND_STATUS } from '../../lib/constants';
import { randomToken } from '../../lib/crypto';
import { isUtr } from '../../lib/utr';
import type { Ctx, ServiceDeps } from '../context';
import type { WebViewService } from '../delivery/recipients';

/** Sends a page of the public archive shows, newest first (the feed has the newest page). */
export const ARCHIVE_PAGE_SIZE = 20;
/** An archive id: 12 random bytes, base64url. */
const ARCHIVE_ID = /^[A-Za-z0-9_-]{16}$/;
/** How much of each send's text the archive's list shows. */
const EXCERPT = 300;

/** One send of a public archive, as rendered for nobody. */
export interface ArchiveItem {
  utr: string;
  subject: string;
  /** When it went out (ISO 8601). */
  sentAt: string;
  /** Its own page in the archive. */
  url: string;
  /** The archive's list it belongs to. */
  archiveUrl: string;
  html: string;
  text: string;
  /** The start of its text, for the list. */
  excerpt: string;
}

export interface ArchivePage {
  /** The newest archived send's sender name, or a generic title: never the account's email. */
  title: string;
  url: string;
  feedUrl: string;
  items: ArchiveItem[];
  page: number;
  hasOlder: boolean;
}

function excerptOf(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT ? `${flat.slice(0, EXCERPT - 1).trimEnd()}…` : flat;
}

/**
 * An account's public archive: its completed single sends marked `archive`, at an address
 * made of a random id (accounts.archive_id), rendered without personal data by the web-view
 * service. Nothing here needs a sign-in; nothing else of the account is reachable from it.
 */
export function createArchiveService({ db, config, webView }: Pick<ServiceDeps, 'db' | 'config'> & { webView: Pick<WebViewService, 'archived'> }) {
  const addressOf = (archiveId: string) => `${config.baseUrl}/archive/${archiveId}`;
  const listed = (userId: number) =>
    db('single_sends').where({ user_id: userId, archive: 1, status: SINGLE_SEND_STATUS.completed }).whereNull('deleted_at');

  async function accountOf(archiveId: string): Promise<number | undefined> {
    if (!ARCHIVE_ID.test(archiveId)) return undefined;
    const row = await db('accounts').where({ archive_id: archiveId }).first('id');
    return row ? Number(row.id) : undefined;
  }

  async function render(userId: number, archiveId: string, rows: Array<Record<string, unknown>>): Promise<ArchiveItem[]> {
    const url = (row: Record<string, unknown>) => `${addressOf(archiveId)}/${String(row.utr)}`;
    const rendered = new Map((await webView.archived(userId, rows.map((row) => ({ id: Number(row.id), permalink: url(row) })))).map((m) => [m.singleSendId, m]));
    return rows.flatMap((row) => {
      const message = rendered.get(Number(row.id));
      if (!message) return [];
      const sent = new Date((row.sent_at ?? row.updated_at) as string | Date);
      return [{ utr: String(row.utr), subject: message.subject, sentAt: sent.toISOString(), url: url(row), archiveUrl: addressOf(archiveId), html: message.html, text: message.text, excerpt: excerptOf(message.text) }];
    });
  }

  return {
    /** The account's archive address (`known`: the id the signed-in account already carries), its id made the first time it is asked for. */
    async address(ctx: Ctx, known?: string | null): Promise<string> {
      if (known) return addressOf(known);
      const current = await db('accounts').where({ id: ctx.userId }).first('archive_id');
      if (current?.archive_id) return addressOf(String(current.archive_id));
      // Two first requests at once: the guard keeps the first id, and both read it back.
      await db('accounts').where({ id: ctx.userId }).whereNull('archive_id').update({ archive_id: randomToken(12) });
      const made = await db('accounts').where({ id: ctx.userId }).first('archive_id');
      return addressOf(String(made.archive_id));
    },

    /** A page of the archive (from 1), or undefined for an id no account has. */
    async page(archiveId: string, page = 1): Promise<ArchivePage | undefined> {
      const userId = await accountOf(archiveId);
      if (userId === undefined) return undefined;
      const rows = await listed(userId)
        .orderBy([{ column: 'sent_at', order: 'desc' }, { column: 'id', order: 'desc' }])
        .limit(ARCHIVE_PAGE_SIZE + 1)
        .offset((page - 1) * ARCHIVE_PAGE_SIZE)
        .select('id', 'utr', 'sent_at', 'updated_at', 'sender_name');
      const newest = page === 1 ? rows[0] : await listed(userId).orderBy([{ column: 'sent_at', order: 'desc' }, { column: 'id', order: 'desc' }]).first('sender_name');
      const name = String(newest?.sender_name ?? '').trim();
      return {
        title: name ? `${name}: email archive` : 'Email archive',
        url: addressOf(archiveId),
        feedUrl: `${addressOf(archiveId)}/rss.xml`,
        items: await render(userId, archiveId, rows.slice(0, ARCHIVE_PAGE_SIZE)),
        page,
        hasOlder: rows.length > ARCHIVE_PAGE_SIZE,
      };
    },

    /** One archived send, or undefined (no such archive, or the send is not in it). */
    async item(archiveId: string, utr: string): Promise<ArchiveItem | undefined> {
      const userId = await accountOf(archiveId);
      if (userId === undefined || !isUtr(utr.toLowerCase())) return undefined;
      const row = await listed(userId).where({ utr: utr.toLowerCase() }).first('id', 'utr', 'sent_at', 'updated_at');
      return row ? (await render(userId, archiveId, [row]))[0] : undefined;
    },
  };
}

export type ArchiveService = ReturnType<typeof createArchiveService>;
