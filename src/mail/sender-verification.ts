import type { Environment } from 'nunjucks';
import type { Config } from '../config';
import type { OutgoingMessage } from './transport';

export interface VerificationRecipient {
  from_name: string;
  from_email: string;
}

/** The link a sender's verification mail carries: `$BASE_URL/verify-sender/<token>`. */
export function verificationLink(config: Pick<Config, 'baseUrl'>, token: string): string {
  return `${config.baseUrl}/verify-sender/${encodeURIComponent(token)}`;
}

/** The verification mail to a sender's from_email, rendered from views/mail/verify-sender.*.njk. */
export function senderVerificationMessage(
  config: Pick<Config, 'baseUrl' | 'mailFrom'>,
  views: Environment,
  sender: VerificationRecipient,
  token: string,
): OutgoingMessage {
  const context = { sender, link: verificationLink(config, token) };
  return {
    from: config.mailFrom,
    to: sender.from_email,
    subject: 'Confirm your sender address',
    html: views.render('mail/verify-sender.html.njk', context),
    text: views.render('mail/verify-sender.txt.njk', context),
  };
}
