import { Writable } from 'node:stream';
import { createLogger } from './logger';

function capture() {
  const lines: string[] = [];
  const logger = createLogger(
    'DEBUG',
    new Writable({
      write(chunk: Buffer, _e, cb) {
        lines.push(chunk.toString());
        cb();
      },
    }),
  );
  return { logger, lines };
}

describe('the log: secrets redacted by where they sit, error codes readable, one msg a line', () => {
  it('an error code stays readable; a pairing code is redacted in a body, a payload, a QR and under pairing_code', () => {
    const { logger, lines } = capture();
    logger.warn(
      {
        code: 'auth.invalid_token',
        err: { code: 'ENOENT', message: 'gone' },
        body: { code: 'ABC123' },
        req: { body: { code: 'ABC124' } },
        frame: { payload: { code: 'ABC125', pairing_code: 'ABC126' } },
        qr: { relay: { code: 'ABC127' } },
        pairing_code: 'ABC128',
        token: 't',
        nested: { api_key: 'k', authorization: 'Bearer x' },
      },
      'refused',
    );
    const line = JSON.parse(lines[0]);
    expect(line).toMatchObject({ code: 'auth.invalid_token', err: { code: 'ENOENT' }, msg: 'refused' });
    expect(lines[0]).not.toMatch(/ABC12\d|"t"|Bearer x|"k"/);
    expect(line.body.code).toBe('[redacted]');
    expect(line.qr.relay.code).toBe('[redacted]');
  });

  it('an object carrying its own msg keeps it as detail: the line has exactly one msg', () => {
    const { logger, lines } = capture();
    logger.warn({ code: 'bridge.no_device', msg: 'the phone is not connected' }, 'request refused');
    expect(lines[0].match(/"msg":/g)).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({ msg: 'request refused', detail: 'the phone is not connected', code: 'bridge.no_device' });
    // A message-only call and an object-only call are untouched.
    logger.info('plain');
    logger.info({ msg: 'only' });
    expect(JSON.parse(lines[1]).msg).toBe('plain');
    expect(JSON.parse(lines[2]).msg).toBe('only');
  });
});
