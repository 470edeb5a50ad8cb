import { bearer, Phone } from './harness';

/** A phone paired through the loopback platform route, as the host's tools pair one; its tokens as the app keeps them. */
export async function pairForBackup(url: string, code: string, deviceId: string): Promise<{ token: string; refresh: string; deviceId: string }> {
  const reg = await fetch(`${url}/pairing/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  if (reg.status !== 200) throw new Error(`register ${code}: ${reg.status} ${await reg.text()}`);
  const phone = await Phone.connect(url);
  const ok = await phone.auth({ pairing_code: code, device_name: 'Pixel', device_id: deviceId });
  phone.close();
  if (ok.type !== 'auth.ok') throw new Error(`pairing failed: ${JSON.stringify(ok.payload)}`);
  return { token: ok.payload.session_token as string, refresh: ok.payload.refresh_token as string, deviceId };
}

/**
 * What the app does against a relay: reconnect with its stored session token (and refresh token, as it
 * always sends); then, once that session has ended (shortened to a second by the phone itself, and waited
 * out by polling, not by a guess), renew with the refresh token. Resolves with the renewal's auth.ok payload.
 */
export async function reconnectThenRenew(url: string, phone: { token: string; refresh: string; deviceId: string }): Promise<Record<string, unknown>> {
  const back = await Phone.connect(url);
  const ok = await back.auth({ session_token: phone.token, refresh_token: phone.refresh, device_id: phone.deviceId, device_name: 'Pixel' });
  back.close();
  if (ok.type !== 'auth.ok') throw new Error(`reconnect with the session token: ${JSON.stringify(ok.payload)}`);
  const prefix = phone.token.slice(0, 8);
  const shortened = await fetch(`${url}/sessions/${prefix}`, {
    method: 'PATCH',
    headers: { ...bearer(phone.token), 'content-type': 'application/json' },
    body: JSON.stringify({ ttl_seconds: 1 }),
  });
  if (shortened.status !== 200) throw new Error(`shorten: ${shortened.status} ${await shortened.text()}`);
  for (let i = 0; (await fetch(`${url}/sessions`, { headers: bearer(phone.token) })).status !== 401; i++) {
    if (i > 200) throw new Error('the shortened session did not end within 10 s');
    await new Promise((r) => setTimeout(r, 50));
  }
  const again = await Phone.connect(url);
  const renewed = await again.auth({ session_token: phone.token, refresh_token: phone.refresh, device_id: phone.deviceId, device_name: 'Pixel' });
  again.close();
  if (renewed.type !== 'auth.ok') throw new Error(`renewal with the refresh token: ${JSON.stringify(renewed.payload)}`);
  return renewed.payload;
}
