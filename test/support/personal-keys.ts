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
