import { PhoneSim, type PhoneSimOptions } from '../../apps/phone-sim/src/phone-sim';
import { bearer, nextCode, registerCode, type TestRelay } from './harness';

/** Pairs a simulated phone and waits until the relay lists it as a bridge device. */
export async function startSim(relay: TestRelay, opts: Partial<PhoneSimOptions> & { terms?: Record<string, unknown> } = {}): Promise<PhoneSim> {
  const code = nextCode();
  const res = await registerCode(relay, code, opts.terms);
  if (res.status !== 200) throw new Error(`register failed: ${res.status}`);
  const sim = await new PhoneSim({ relayUrl: relay.url, code, deviceId: `sim-${code}`, deviceName: `Sim ${code}`, ...opts }).start();
  await until(() => relay.loop.models.bridge.device(sim.tokenPrefix!)?.connId !== undefined);
  return sim;
}

export async function until(cond: () => boolean, timeoutMs = 3000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

export type Call = { status: number; body: Record<string, any> };

/** A Device Control call with the phone's own session bearer (what MOBILE_BRIDGE_TOKEN holds). */
export async function dc(relay: TestRelay, token: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Call> {
  const res = await fetch(`${relay.url}${path}`, {
    method,
    headers: { ...bearer(token), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : {} };
}

export async function op(relay: TestRelay, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Call> {
  const res = await fetch(`${relay.url}${path}`, {
    method,
    // The operator: on loopback, with the home's operator key.
    headers: { ...relay.op, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}
