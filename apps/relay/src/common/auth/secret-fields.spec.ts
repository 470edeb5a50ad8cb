import { Writable } from 'node:stream';
import { redact } from '../../console/console-redaction';
import { createLogger } from '../logger';
import { fieldNamePattern, SECRET_FIELDS } from './secret-fields';

describe('one list of secret field names, read by the log and the console', () => {
  it('the log redacts each at the top level and two objects down', () => {
    const lines: string[] = [];
    const logger = createLogger(
      'INFO',
      new Writable({
        write(chunk: Buffer, _e, cb) {
          lines.push(chunk.toString());
          cb();
        },
      }),
    );
    for (const name of SECRET_FIELDS) logger.warn({ [name]: 'S1', a: { [name]: 'S2', b: { [name]: 'S3' } } }, name);
    expect(lines).toHaveLength(SECRET_FIELDS.length);
    for (const line of lines) expect(line).not.toMatch(/S[123]/);
  });

  it('the console redacts each in any spelling at any depth, and keeps a notification key', () => {
    for (const name of SECRET_FIELDS) {
      const camel = name.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
      const out = JSON.stringify(redact({ [name]: 'S1', deep: [{ x: { y: { [camel]: 'S2', [name.toUpperCase()]: 'S3' } } }] }));
      expect(out).not.toMatch(/S[123]/);
    }
    expect(redact({ key: '0|com.chat|42|null|10123' })).toEqual({ key: '0|com.chat|42|null|10123' });
  });

  it('names read in any case with optional underscores, and nothing looser', () => {
    const re = fieldNamePattern(['session_token']);
    expect(['session_token', 'sessionToken', 'SESSIONTOKEN'].map((n) => re.test(n))).toEqual([true, true, true]);
    expect(['session_token_x', 'session__token', 'token'].map((n) => re.test(n))).toEqual([false, false, false]);
  });
});
