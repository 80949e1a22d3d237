import { ERASED_ADDRESS_DOMAIN, MESSAGE_KIND, WEBVIEW_PLACEHOLDER } from '../../../lib/constants';
import { createSigner, TOKEN_PURPOSE } from '../../../lib/signed-token';
import { personalValues } from '../../../mail/personal-values';
import { renderMessage, RenderedMessage } from '../../../mail/render';
import type { ServiceDeps } from '../../context';
import { LEDGER_COLUMNS, LedgerRow, shownVariants } from '../ledger';
import { MessageSources, sourceKey } from '../messages';
import { blankOpenPixels, samplePerson } from '../messages';
import { parseJson } from '../../../db/dialect';

/** What a web-view link finds: the message, one retention deleted or whose address was erased (`gone`), or nothing (a forged link). */
export type WebView = { html: string; subject: string } | 'gone' | undefined;

/** A send's message as the public archive shows it: for nobody, untracked, without the recipient's blocks. */
export interface ArchivedMessage extends RenderedMessage {
  singleSendId: number;
}

/**
 * The web view (`((webview_url))`) and the public archive's rendering: both build the message
 * with the worker's own sources and renderer, so what a page shows is what the mail said.
 */
export function createWebViewService({ db, config, secret }: Pick<ServiceDeps, 'db' | 'config' | 'secret'>) {
  const signer = createSigner(secret);

  return {
    /**
     * The message of a web-view token, rebuilt for its recipient from the ledger row: the send's
     * content and the contact as they are now, its links tracked as in the mail (a click counts
     * as a click), its open pixel blanked (looking at it here is not an open). A row that
     * retention deleted (the token is genuine, the row is not there), or whose address was
     * erased, is `gone`.
     */
    async message(token: string): Promise<WebView> {
      const id = signer.verify(TOKEN_PURPOSE.webview, token);
      if (id === undefined) return undefined;
      const row = (await db('send_messages').where({ id }).first(LEDGER_COLUMNS)) as LedgerRow | undefined;
      if (!row) return 'gone';
      if (Number(row.kind) === MESSAGE_KIND.system) return undefined;
      // An erased recipient's message keeps its row for the counts, but names nobody any more.
      if (row.email.endsWith(`@${ERASED_ADDRESS_DOMAIN}`)) return 'gone';
      const sources = new MessageSources(db, signer, config.baseUrl, { recordLinks: false });
      const { sources: loaded, people } = await sources.prepare([row]);
      const source = loaded.get(sourceKey(row) ?? '');
      if (!source) return 'gone';
      const message = sources.build(row, source, people(row));
      return { subject: message.subject, html: blankOpenPixels(message.html ?? '', config.baseUrl) };
    },

    /**
     * Single sends of one account as the public archive shows them: rendered for nobody, its
     * personal placeholders filled with the sample person the previews use (the account's custom
     * fields showing their names), links as written, no pixel, and without the blocks only a
     * recipient needs (the preference link, a footer marked for recipients: see
     * withoutRecipientBlocks); an A/B test's send shows its winner (or, when everyone was in the
     * test, the variant most recipients got); `((webview_url))` is the send's own archive page.
     */
    async archived(userId: number, sends: Array<{ id: number; permalink: string }>): Promise<ArchivedMessage[]> {
      const variants = await shownVariants(db, sends.map((send) => send.id));
      const rows: LedgerRow[] = sends.map((send) => ({
        id: 0, kind: MESSAGE_KIND.single, user_id: userId, single_send_id: send.id, automation_id: null, automation_schedule_id: null,
        contact_id: null, segment_recipient_id: null, email: '', email_key: '', attempts: 0, unconfirmed: 0, payload: null, ab_variant: variants.get(send.id) ?? null,
      }));
      const sources = new MessageSources(db, signer, config.baseUrl, { recordLinks: false, untracked: true, forNobody: true });
      const [{ sources: loaded }, custom] = await Promise.all([
        sources.prepare(rows),
        db('fields').where({ user_id: userId, is_reserved: 0 }).orderBy('id').pluck('field_name'),
      ]);
      const sample = samplePerson(custom.map(String));
      const out: ArchivedMessage[] = [];
      sends.forEach((send, i) => {
        const source = loaded.get(sourceKey(rows[i]) ?? '');
        if (!source) return;
        const values = personalValues(sample, parseJson<Record<string, unknown>>(sample.custom_fields, {}), () => undefined, source.sender);
        values[WEBVIEW_PLACEHOLDER] = send.permalink;
        out.push({ singleSendId: send.id, ...renderMessage(source.compiled, { values, unsubscribeUrl: '', pixelUrl: '', clickUrl: '' }) });
      });
      return out;
    },
  };
}

export type WebViewService = ReturnType<typeof createWebViewService>;
