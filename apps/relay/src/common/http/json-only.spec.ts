import { refusesAsNotJson } from './json-only';

describe('refusesAsNotJson (loopback routes and the console take bodies only as JSON)', () => {
  const json = { 'content-type': 'application/json', 'content-length': '2' };

  it('takes JSON, with parameters and in any case', () => {
    for (const type of ['application/json', 'application/json; charset=utf-8', 'Application/JSON', 'application/json ;charset=utf-8']) {
      expect(refusesAsNotJson('POST', { 'content-type': type, 'content-length': '2' }, 'refused')).toBe(false);
    }
  });

  it('refuses what a cross-site form or fetch can send without a preflight, and any other type', () => {
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
      '',
      'application/jsonx',
    ]) {
      for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
        expect(refusesAsNotJson(method, { 'content-type': type, 'content-length': '3' }, 'allowed')).toBe(true);
      }
    }
  });

  it('a body without a type is refused everywhere, announced by a length or a transfer encoding', () => {
    for (const bodiless of ['allowed', 'refused'] as const) {
      expect(refusesAsNotJson('POST', { 'content-length': '3' }, bodiless)).toBe(true);
      expect(refusesAsNotJson('POST', { 'transfer-encoding': 'chunked' }, bodiless)).toBe(true);
    }
  });

  it('a request with neither body nor type passes only where bodiless requests are allowed', () => {
    for (const headers of [{}, { 'content-length': '0' }]) {
      expect(refusesAsNotJson('DELETE', headers, 'allowed')).toBe(false);
      expect(refusesAsNotJson('POST', headers, 'allowed')).toBe(false);
      expect(refusesAsNotJson('POST', headers, 'refused')).toBe(true);
    }
  });

  it('GET, HEAD and OPTIONS have no body to guard', () => {
    for (const method of ['GET', 'HEAD', 'OPTIONS']) {
      expect(refusesAsNotJson(method, { 'content-type': 'text/plain' }, 'refused')).toBe(false);
      expect(refusesAsNotJson(method, {}, 'refused')).toBe(false);
    }
    expect(refusesAsNotJson('POST', json, 'refused')).toBe(false);
  });
});
