import * as path from 'node:path';
import { pairPhone, type Phone, type TestRelay } from './harness';
import { call } from './http';
import { FileKeyStore } from '../../apps/relay/src/personal/key-store';

/** The data keys of a relay home (file log), read as an auditor with access to the home would: for `replayLog`. */
export function homeKeyFor(home: string): (keyId: string) => Buffer | undefined {
  const keys = FileKeyStore.open(path.join(home, 'relay'));
  return (id) => keys.get(id);
}

/** What phone A sends and gets in `personalTraffic`: none of it may be found at rest, and all of it goes when A is forgotten. */
export const A_SECRETS = ['OTP 482913', 'Bank alpha', 'secret plan bravo', 'Plan delta', 'reply echo'];

/** Phone A: a notification, a Thread message to it, its reply. Phone B: a notification. */
export async function personalTraffic(relay: TestRelay): Promise<{ a: Phone; aPrefix: string; b: Phone; bPrefix: string }> {
  const pa = await pairPhone(relay, { device: { device_id: 'phone-a', device_name: 'Phone A' } });
  const pb = await pairPhone(relay, { device: { device_id: 'phone-b', device_name: 'Phone B' } });
  const a = pa.phone;
  const b = pb.phone;
  a.send('notifications', 'notification.posted', { package_name: 'com.bank', title: 'Bank alpha', text: 'OTP 482913', key: 'otp' }, 'n1');
  await a.next((f) => f.id === 'n1');
  b.send('notifications', 'notification.posted', { package_name: 'com.chat', title: 'Chat', text: 'charlie stays' }, 'n2');
  await b.next((f) => f.id === 'n2');
  a.send('proactive', 'proactive.subscribe', {}, 'sub');
  await a.type('proactive', 'proactive.subscribed');
  expect((await call(relay, 'POST', '/phone/message', { chat_id: 'plans', text: 'secret plan bravo', title: 'Plan delta' })).status).toBe(200);
  await a.type('proactive', 'phone.message');
  a.send('proactive', 'proactive.reply', { chat_id: 'plans', text: 'reply echo' }, 'r1');
  await a.next((f) => f.id === 'r1');
  return { a, aPrefix: pa.prefix, b, bPrefix: pb.prefix };
}

/**
 * Two Thread messages posted while no phone was subscribed (sealed under the host's key), in the same
 * hour: the first delivered to phone P (its backlog), the second, after P unsubscribed, to phone Q.
 */
export async function queuedThenDelivered(
  relay: TestRelay,
): Promise<{ p: { phone: Phone; prefix: string }; q: { phone: Phone; prefix: string }; forP: string; forQ: string }> {
  const p = await pairPhone(relay, { device: { device_id: 'phone-p', device_name: 'Phone P' } });
  const q = await pairPhone(relay, { device: { device_id: 'phone-q', device_name: 'Phone Q' } });
  const post = async (text: string) => {
    const r = await call(relay, 'POST', '/phone/message', { chat_id: 'ops', text, title: `about ${text.split(' ')[0]}` });
    expect(r.status).toBe(200);
    return String(r.body.message_id);
  };
  const subscribe = async (phone: Phone) => {
    phone.send('proactive', 'proactive.subscribe', {}, 'sub');
    await phone.type('proactive', 'proactive.subscribed');
  };
  const forP = await post(P_SECRET);
  await subscribe(p.phone);
  expect((await p.phone.type('proactive', 'phone.message')).payload).toMatchObject({ message_id: forP, text: P_SECRET });
  p.phone.send('proactive', 'proactive.unsubscribe', {}, 'unsub');
  await p.phone.type('proactive', 'proactive.unsubscribed');
  const forQ = await post(Q_TEXT);
  await subscribe(q.phone);
  expect((await q.phone.type('proactive', 'phone.message')).payload).toMatchObject({ message_id: forQ, text: Q_TEXT });
  return { p, q, forP, forQ };
}
export const P_SECRET = 'rotate-AKIAP1SECRET at dawn';
export const Q_TEXT = 'Q-keeps-this note';
