import * as fs from 'node:fs';
import * as path from 'node:path';
import { bearer, pairPhone, tempHome, type TestRelay } from '../support/harness';
import { REMOTE } from '../support/http';
import { startRelay } from './client-relay';

/**
 * The app's profile image import (app network/relay/RelayHttpClient.kt 463-481): on a failure it reads
 * the body's `error` as a code and maps it, with the status, to what it shows. The mapping is restated
 * here as the app writes it, so a change of shape on our side shows up as the wrong sentence.
 */
function appAvatarReason(status: number, body: string): string {
  let errorCode: string | null = null;
  try {
    const e = (JSON.parse(body) as Record<string, unknown>).error;
    errorCode = typeof e === 'string' ? e : null;
  } catch {
    errorCode = null;
  }
  switch (status) {
    case 401:
      return 'Unauthorized — re-pair with the relay';
    case 403:
      return 'The host profile image is blocked by Relay file policy';
    case 404:
      if (errorCode === 'profile_avatar_not_found') return 'No host profile image found — add avatar.png or profile.jpg to the profile directory';
      if (errorCode === 'profile_not_found') return 'The selected profile directory was not found on the Relay host';
      return 'This Relay host does not support profile image import yet — update Relay or choose a file';
    case 415:
      return 'The host profile image format is not supported';
    default:
      return status >= 500 ? `Relay error (HTTP ${status})` : `HTTP ${status}`;
  }
}

describe('compat: the app reads profile errors by code (RelayHttpClient.kt 463-481)', () => {
  let relay: TestRelay;
  let token: string;
  let home: string;
  beforeAll(async () => {
    home = tempHome();
    fs.mkdirSync(path.join(home, 'profiles', 'work'), { recursive: true });
    fs.writeFileSync(path.join(home, 'profiles', 'work', 'config.yaml'), 'description: Work\n');
    fs.mkdirSync(path.join(home, 'profiles', 'art'), { recursive: true });
    fs.writeFileSync(path.join(home, 'profiles', 'art', 'config.yaml'), 'description: Art\n');
    fs.writeFileSync(path.join(home, 'profiles', 'art', 'avatar.png'), 'this is not an image');
    fs.writeFileSync(path.join(home, 'config.yaml'), 'description: Default\n');
    relay = await startRelay({ home });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(() => relay.close());

  const avatar = async (name: string) => {
    const res = await fetch(`${relay.url}/api/profiles/${name}/avatar`, { headers: { ...REMOTE, ...bearer(token), accept: 'image/*' } });
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) as Record<string, unknown> };
  };

  it('a profile without an image: 404 error "profile_avatar_not_found", the sentence in message', async () => {
    const r = await avatar('work');
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({
      ok: false,
      error: 'profile_avatar_not_found',
      code: 'profile.avatar_not_found',
      message: 'profile "work" has no avatar image',
    });
    expect(appAvatarReason(r.status, r.text)).toBe('No host profile image found — add avatar.png or profile.jpg to the profile directory');
  });

  it('an unknown profile: 404 error "profile_not_found"', async () => {
    const r = await avatar('ghost');
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ error: 'profile_not_found', message: 'no profile "ghost"' });
    expect(appAvatarReason(r.status, r.text)).toBe('The selected profile directory was not found on the Relay host');
  });

  it('a file that is not an image: 415, which the app names as an unsupported format', async () => {
    const r = await avatar('art');
    expect(r.status).toBe(415);
    expect(r.body).toMatchObject({ error: 'profile_avatar_invalid', code: 'profile.avatar_invalid' });
    expect(appAvatarReason(r.status, r.text)).toBe('The host profile image format is not supported');
  });
});
