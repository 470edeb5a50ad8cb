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

  /**
   * Not the clients' routes, and not 201 either: `/mcp` is answered by the MCP SDK on the raw response with
   * the protocol's own codes (200, or 202 for a notification: MCP Streamable HTTP); the console's chain check
   * starts a background job and answers 202 Accepted to the console, its only caller.
   */
  const OWN_CODES: Record<string, number | undefined> = { 'POST mcp/': undefined, 'POST /console/api/store/verify': 202 };

  it('every POST handler declares 200 (the MCP endpoint and a console job aside, neither ever 201)', () => {
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
          const code = Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined;
          if (route in OWN_CODES ? code !== OWN_CODES[route] : code !== 200) offenders.push(`${route} ${code ?? 'default 201'}`);
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
