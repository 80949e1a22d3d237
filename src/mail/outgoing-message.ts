import type { DkimKey } from './dkim';

/** A message as the service hands it to the transport. */
export interface OutgoingMessage {
  from: string | { name: string; address: string };
  to: string;
  replyTo?: string;
  subject: string;
  html: string;
  text?: string;
  /** `html` and `text` are already quoted-printable encoded (renderEncoded): sent as built. */
  encoded?: boolean;
  /** Liquid values of this message that failed and were left empty: counted on its send, never sent. */
  templateErrors?: number;
  /** Copies (transactional mail): in the envelope and the headers like `to`. */
  cc?: string[];
  /** Blind copies (transactional mail): in the envelope only. */
  bcc?: string[];
  /** Files (transactional mail), base64; nodemailer builds the multipart/mixed around them. */
  attachments?: Array<{ filename: string; content: string; encoding: 'base64'; contentType?: string }>;
  /** Extra headers, for example List-Unsubscribe. */
  headers?: Record<string, string>;
  messageId?: string;
  /** The account sending it: the outbox keeps each account's messages in its own folder. */
  accountId?: number;
  /** The SMTP envelope (`MAIL FROM` the VERP bounce address); default: From and To. */
  envelope?: { from: string; to: string };
  /**
   * The key of the verified sending domain of its From address: it signs the message instead
   * of the instance's DKIM_DOMAIN key. Every transport signs with it.
   */
  dkim?: DkimKey;
  /**
   * With BOUNCE_DOMAIN: the domain of its VERP envelope sender instead of BOUNCE_DOMAIN, the
   * sending domain's bounce subdomain when its return-path record points at BOUNCE_DOMAIN
   * (so SPF aligns with the From domain too).
   */
  returnPathDomain?: string;
}
