// An SMTP server on 127.0.0.1 for scripts/test-container.sh: each message it accepts is written,
// parsed, as <n>.json into the folder given as the first argument; prints its port once listening.
const fs = require('node:fs');
const path = require('node:path');
const { SMTPServer } = require('smtp-server');
const { simpleParser } = require('mailparser');

const folder = process.argv[2];
let count = 0;
const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  disableReverseLookup: true,
  onData(stream, session, done) {
    simpleParser(stream).then(
      (mail) => {
        count += 1;
        const record = { to: session.envelope.rcptTo.map((r) => r.address), subject: mail.subject, text: mail.text ?? '' };
        const file = path.join(folder, `${count}.json`);
        fs.writeFileSync(`${file}.tmp`, JSON.stringify(record));
        fs.renameSync(`${file}.tmp`, file);
        done();
      },
      (err) => done(err),
    );
  },
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
