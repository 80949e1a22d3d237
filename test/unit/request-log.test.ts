import { Writable } from 'node:stream';
import express from 'express';
import pino from 'pino';
import request from 'supertest';
import { requestLog } from '../../src/http/request-log';

function appWith(level: string) {
  const lines: Record<string, any>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  const logger = pino({ level, base: undefined }, sink);
  const child = jest.spyOn(logger, 'child');
  const app = express();
  app.use(requestLog(app, logger));
  app.get('/ok', (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/unsubscribe/:token', (_req, res) => {
    res.send('page');
  });
  app.get('/fails', (req, res) => {
    req.log.error({ detail: 'x' }, 'unhandled error');
    res.status(500).send('no');
  });
  return { app, lines, child };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('the request log', () => {
  test('when the level is info then each request writes one line with its id, method, redacted URL, status and time', async () => {
    const { app, lines } = appWith('info');
    const res = await request(app).get('/unsubscribe/s3cret?x=1').set('X-Request-Id', 'trace-1').expect(200);
    await request(app).get('/ok').expect(200);
    await settle();
    expect(res.headers['x-request-id']).toBe('trace-1');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      level: 30,
      req: { id: 'trace-1', method: 'GET', url: '/unsubscribe/[redacted]?x=1' },
      res: { statusCode: 200 },
      msg: 'request completed',
    });
    expect(typeof lines[0].responseTime).toBe('number');
    expect(lines[1].req.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('when the level is warn then a successful request writes nothing and builds no child logger', async () => {
    const { app, lines, child } = appWith('warn');
    const res = await request(app).get('/ok').expect(200);
    await settle();
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(lines).toEqual([]);
    expect(child).not.toHaveBeenCalled();
  });

  test('when a request fails at warn level then its error and its 500 line carry the request id', async () => {
    const { app, lines } = appWith('warn');
    const res = await request(app).get('/fails').expect(500);
    await settle();
    const id = res.headers['x-request-id'];
    expect(lines.map((l) => [l.level, l.msg, l.req.id])).toEqual([
      [50, 'unhandled error', id],
      [50, 'request completed', id],
    ]);
    expect(lines[1].res).toEqual({ statusCode: 500 });
  });
});
