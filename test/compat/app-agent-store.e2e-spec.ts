import * as path from 'node:path';
import { AgentStore } from '../support/agent-store';
import { bearer, pairPhone, type TestRelay } from '../support/harness';
import { startRelay } from './client-relay';
import { call, REMOTE, type Json } from '../support/http';

/**
 * The phone app reading what the relay takes from the agent's session store, decoded as the app decodes it
 * (Codename-11/hermes-relay app/src/main/kotlin/com/hermesandroid/relay/network/relay/RelayHttpClient.kt,
 * `sessionsJson` at 72-77: ignoreUnknownKeys, so our extra fields are harmless; a field of the wrong type
 * still fails the whole decode, so every field the app declares must come with the app's type).
 */

/** RelayHttpClient.kt:600-605 `PhoneThreadInfo(session_id: String = "", chat_id: String = "", title: String? = null)`. */
function phoneThreadInfo(j: Json): { sessionId: string; chatId: string; title: string | null } {
  const str = (v: unknown, name: string): string => {
    if (v === undefined) return '';
    if (typeof v !== 'string') throw new Error(`${name}: expected a string, got ${JSON.stringify(v)}`);
    return v;
  };
  if (j.title !== undefined && j.title !== null && typeof j.title !== 'string') throw new Error(`title: expected a string or null`);
  return { sessionId: str(j.session_id, 'session_id'), chatId: str(j.chat_id, 'chat_id'), title: (j.title as string | null | undefined) ?? null };
}

/** RelayHttpClient.kt:148-162 `ImageActivitySnapshot` / `ImageActivity`: session_id, profile, call_id, tool_name, state required. */
function imageActivitySnapshot(j: Json) {
  const req = (o: Json, k: string): string => {
    if (typeof o[k] !== 'string') throw new Error(`${k}: a required string, got ${JSON.stringify(o[k])}`);
    return o[k] as string;
  };
  const num = (v: unknown, k: string): number => {
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`${k}: expected a Double, got ${JSON.stringify(v)}`);
    return v;
  };
  if (j.activities !== undefined && !Array.isArray(j.activities)) throw new Error('activities: expected a list');
  return {
    sessionId: req(j, 'session_id'),
    profile: req(j, 'profile'),
    activities: ((j.activities ?? []) as Json[]).map((a) => ({
      callId: req(a, 'call_id'),
      toolName: req(a, 'tool_name'),
      state: req(a, 'state'),
      startedAt: num(a.started_at, 'started_at'),
      completedAt: a.completed_at === null || a.completed_at === undefined ? null : num(a.completed_at, 'completed_at'),
    })),
  };
}

/** ConnectionViewModel.kt:2532-2536 `refreshPhoneThreadChatIds`: blanks skipped, then `associate { sessionId to chatId }`. */
function replyRouting(threads: Array<ReturnType<typeof phoneThreadInfo>>): Record<string, string> {
  const map: Record<string, string> = {};
  for (const t of threads) if (t.sessionId.trim() && t.chatId.trim()) map[t.sessionId] = t.chatId;
  return map;
}

describe('compat: the phone app on the agent session store (reply routing, image activity)', () => {
  let relay: TestRelay;
  let token: string;
  const T0 = 1_772_366_400;
  const asApp = () => ({ ...bearer(token), ...REMOTE, accept: 'application/json' });

  beforeAll(async () => {
    relay = await startRelay({ env: { PHONE_ENABLED: '1' } });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(() => relay?.close());

  it('GET /phone/threads (RelayHttpClient.kt:621-672) decodes, and every phone session routes to its chat', async () => {
    // Without a store the answer still decodes (the app gets an empty map and keeps its learned one).
    await call(relay, 'POST', '/phone/message', { chat_id: 'ops', text: 'deploy done', title: 'Ops' });
    let r = await call(relay, 'GET', '/phone/threads', undefined, asApp());
    expect(r.status).toBe(200);
    expect(replyRouting((r.body.threads as Json[]).map(phoneThreadInfo))).toEqual({});

    const store = new AgentStore(path.join(relay.home, 'state.db'));
    store.session({ id: '20260301_115000_0a0a0a', chat_id: 'ops', title: 'Ops', last_activity_at: T0 - 5 });
    store.session({ id: '20260228_090000_0b0b0b', chat_id: 'ops', title: null });
    store.session({ id: '20260301_080000_0c0c0c', chat_id: 'home', title: 'Home' });
    store.session({ id: '20260301_070000_0d0d0d', source: 'discord', chat_id: 'ops' });
    store.close();
    r = await call(relay, 'GET', '/phone/threads', undefined, asApp());
    const threads = (r.body.threads as Json[]).map(phoneThreadInfo);
    expect(replyRouting(threads)).toEqual({
      '20260301_115000_0a0a0a': 'ops',
      '20260228_090000_0b0b0b': 'ops',
      '20260301_080000_0c0c0c': 'home',
    });
    expect(threads[0]).toEqual({ sessionId: '20260301_115000_0a0a0a', chatId: 'ops', title: 'Ops' });
  });

  it('GET /chat/image-activity (RelayHttpClient.kt:169-229) decodes the store\'s calls; "completed" ends the app\'s wait', async () => {
    new AgentStore(path.join(relay.home, 'profiles', 'work', 'state.db')).imageCall('20260301_120000_ffffff', 'call_img', T0 + 2, T0 + 20).close();
    // RelayHttpClient.kt:189-194: profile, session_id, and since as Kotlin's Double.toString writes it.
    const r = await call(relay, 'GET', '/chat/image-activity?profile=work&session_id=20260301_120000_ffffff&since=1.772366401E9', undefined, asApp());
    expect(r.status).toBe(200);
    expect(imageActivitySnapshot(r.body)).toEqual({
      sessionId: '20260301_120000_ffffff',
      profile: 'work',
      activities: [{ callId: 'call_img', toolName: 'image_generate', state: 'completed', startedAt: T0 + 2, completedAt: T0 + 20 }],
    });
    // Without a store the snapshot still decodes, with no activities.
    const none = await call(relay, 'GET', '/chat/image-activity?profile=default&session_id=x&since=1.7E9', undefined, asApp());
    expect(imageActivitySnapshot(none.body)).toEqual({ sessionId: 'x', profile: 'default', activities: [] });
  });

  it('an unknown profile is 404, which the app reads as "no image activity here" and stops polling (RelayHttpClient.kt:210-211), as with the reference relay', async () => {
    const r = await call(relay, 'GET', '/chat/image-activity?profile=ghost&session_id=x&since=1.7E9', undefined, asApp());
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ ok: false, code: 'image_activity.profile_not_found', profile: 'ghost' });
  });
});
