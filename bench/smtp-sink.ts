import { SMTPServer } from 'smtp-server';

/**
 * The benchmark's SMTP sink, run as its own process (`fork`) so that it does not share a core's
 * event loop with the sender. Accepts everything, keeps nothing, counts messages; answers
 * `count` messages from its parent with the running total.
 */
let count = 0;
const server = new SMTPServer({
  disableReverseLookup: true,
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  logger: false,
  size: 10 * 1024 * 1024,
  onData(stream, _session, callback) {
    stream.on('end', () => {
      count += 1;
      callback();
    });
    stream.resume();
  },
});
server.on('error', () => undefined);
server.listen(0, '127.0.0.1', () => {
  process.send?.({ port: (server.server.address() as { port: number }).port });
});
process.on('message', (message) => {
  if (message === 'count') process.send?.({ count });
  if (message === 'stop') server.close(() => process.exit(0));
});
