import { RequestMethod } from '@nestjs/common';
import { HTTP_CODE_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { type TestRelay } from '../support/harness';
import { startRelay } from './client-relay';

/**
 * The agent host's pair command (plugin/pair.py `register_relay_code`, `mint_relay_pairing`) and the
 * app's media upload (app/.../RelayHttpClient.kt) treat any status but 200 as failure, and the
 * reference relay answers every create with 200. Nest's default for POST is 201, so every POST handler
 * must say otherwise: this test walks the live application's controllers and fails on one that does not.
 */
describe('compat: no route answers 201', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay();
  });
  afterAll(() => relay.close('test done'));

  it('every POST handler declares 200', () => {
    const posts: string[] = [];
    const offenders: string[] = [];
    for (const mod of relay.app.get(ModulesContainer).values()) {
      for (const wrapper of mod.controllers.values()) {
        const proto = (wrapper.metatype as { prototype?: object } | undefined)?.prototype;
        if (!proto) continue;
        const base = String(Reflect.getMetadata(PATH_METADATA, wrapper.metatype as object) ?? '');
        for (const name of Object.getOwnPropertyNames(proto)) {
          const handler = Object.getOwnPropertyDescriptor(proto, name)?.value as unknown;
          if (typeof handler !== 'function' || name === 'constructor') continue;
          if (Reflect.getMetadata(METHOD_METADATA, handler) !== RequestMethod.POST) continue;
          const route = `POST ${base}/${String(Reflect.getMetadata(PATH_METADATA, handler) ?? '')}`.replace(/\/+/g, '/');
          posts.push(route);
          if (Reflect.getMetadata(HTTP_CODE_METADATA, handler) !== 200) offenders.push(route);
        }
      }
    }
    expect(posts.length).toBeGreaterThan(30);
    expect(offenders).toEqual([]);
  });

  it('the live routes answer 200: register, mint, clipboard', async () => {
    const reg = await fetch(`${relay.url}/pairing/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: 'ABC200' }),
    });
    expect(reg.status).toBe(200);
    const mint = await fetch(`${relay.url}/pairing/mint`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(mint.status).toBe(200);
  });
});
