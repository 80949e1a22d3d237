import type { SendMailOptions, Transporter } from 'nodemailer';

/**
 * How far one send got before it failed, for the instance's SMTP transport and the relays alike:
 * a server that goes silent after taking the whole message may have accepted it, so such a
 * message must not be sent again (see classifyRelayError).
 */
export interface HandOver {
  /** Set, as it happens, once the transport's stream or request has given the whole message away. */
  whole: boolean;
}

/** What a recipient's report says of a message a relay (or the instance's SMTP server) may have taken before it went silent. */
export const UNCONFIRMED_WORDS = 'The relay stopped answering after taking the message; it may have been delivered, so it was not sent again.';

/** Marks the error of a send that failed after the whole message was handed over. */
const HANDED_OVER = Symbol('handedOver');

export function handedOver(err: unknown): unknown {
  if (err && typeof err === 'object') (err as Record<symbol, boolean>)[HANDED_OVER] = true;
  return err;
}

export function wasHandedOver(err: unknown): boolean {
  return Boolean((err as Record<symbol, unknown> | null)?.[HANDED_OVER]);
}

/** nodemailer keeps unknown keys of a message's options: the plugin below finds the send's HandOver there. */
const HAND_OVER_KEY = 'handOver';

/**
 * A nodemailer plugin noting when the SMTP connection has read a message to its end: the data's
 * terminating dot follows, and from then on the server may accept it however the connection ends.
 */
export function trackHandOver(transporter: Transporter): Transporter {
  transporter.use('stream', (mail, done) => {
    const handOver = (mail.data as Record<string, unknown>)[HAND_OVER_KEY] as HandOver | undefined;
    const message = mail.message as unknown as { createReadStream(options?: unknown): NodeJS.ReadableStream };
    if (handOver) {
      const create = message.createReadStream.bind(message);
      message.createReadStream = (options) => {
        const stream = create(options);
        stream.once('end', () => {
          handOver.whole = true;
        });
        return stream;
      };
    }
    done();
  });
  return transporter;
}

/** Sends through a transporter made with trackHandOver; its error is marked when the whole message had gone. */
export async function sendTracked(transporter: Transporter, options: SendMailOptions) {
  const handOver: HandOver = { whole: false };
  try {
    return await transporter.sendMail({ ...options, [HAND_OVER_KEY]: handOver } as SendMailOptions);
  } catch (err) {
    throw handOver.whole ? handedOver(err) : err;
  }
}
