import type { SimAnswer } from './bridge-command';
import { content, fail, ok, userDenied, type AppContext, type Body } from './app-context';
import { httpUrl } from './urls';

/*
 * The app's routes that move media through the relay's HTTP side (paths under app/src/main/kotlin/com/hermesandroid/relay/):
 * the screenshot it uploads, and the attachments /share_media and /send_mms fetch.
 */

/** /share_media and /send_mms (BridgeCommandHandler.kt:1412-1475, 1798-1930): its own modal always, then the attachments fetched. */
export async function share(path: string, b: Body, ctx: AppContext): Promise<SimAnswer | null> {
  const mms = path === '/send_mms';
  const pkg = content(b.package);
  if (!ctx.safety.packageAllowed(pkg))
    return { status: 403, result: { error: `blocked package ${pkg ?? 'unknown'}`, status: 'blocked', reason: 'blocked_package' } };
  const refs = shareRefs(b);
  const to = content(b.to) ?? '';
  const text = content(b.text) ?? content(b.body) ?? '';
  const question = mms
    ? `Send MMS compose to ${to.trim() ? to : 'the selected recipient'} with ${refs.length} attachment(s)?`
    : refs.length > 0
      ? `Share ${refs.length} attachment(s) from Hermes-Relay?`
      : 'Share text from Hermes-Relay?';
  const allowed = ctx.safety.confirm(path, question, ctx.confirm, ctx.modalAsked);
  if (allowed === null) return null;
  if (!allowed) return { status: 403, result: userDenied('The user denied the media share action via the on-device confirmation modal.') };
  if (mms && !to.trim()) return fail("send_mms requires non-blank 'to'", { status: 'failed', reason: 'invalid_schema' });
  if (refs.length === 0 && !text.trim())
    return fail(`${path} requires at least one attachment or non-blank text`, { status: 'failed', reason: 'invalid_schema' });
  const types: string[] = [];
  for (const r of refs) {
    const fetched = await fetchAttachment(r, ctx);
    if ('error' in fetched) return fail(fetched.error, { status: 'failed', reason: 'media_fetch_failed' });
    types.push(r.contentType ?? fetched.contentType);
  }
  const target = pkg?.trim() || (mms ? 'com.google.android.apps.messaging' : null);
  return ok({
    ok: true,
    status: mms ? 'compose_opened' : 'share_opened',
    mode: mms ? 'user_confirmed_mms_handoff' : 'user_confirmed_share',
    ...(mms ? { to } : {}),
    attachments: refs.length,
    content_types: types,
    ...(target ? { package: target } : {}),
    summary: mms ? `Opened MMS compose for ${to} with ${refs.length} attachment(s)` : `Opened share UI with ${refs.length} attachment(s)`,
  });
}

type Ref = { media?: string; path?: string; contentType?: string };

/** extractShareAttachmentRefs (BridgeCommandHandler.kt:1740-1796). */
function shareRefs(b: Body): Ref[] {
  const refs: Ref[] = [];
  const str = (o: Body, k: string) => (typeof o[k] === 'string' && (o[k] as string).trim() ? (o[k] as string).trim() : undefined);
  const add = (r: Ref) => (r.media || r.path ? refs.push(r) : 0);
  const ct = str(b, 'content_type');
  add({ path: str(b, 'path'), contentType: ct });
  add({ media: str(b, 'media'), contentType: ct });
  add({ media: str(b, 'media_token'), contentType: ct });
  for (const p of Array.isArray(b.paths) ? b.paths : []) add({ path: typeof p === 'string' ? p.trim() || undefined : undefined });
  for (const m of Array.isArray(b.media_tokens) ? b.media_tokens : []) add({ media: typeof m === 'string' ? m.trim() || undefined : undefined });
  for (const a of Array.isArray(b.attachments) ? b.attachments : []) {
    if (typeof a !== 'object' || a === null || Array.isArray(a)) continue;
    const o = a as Body;
    add({ media: str(o, 'media') ?? str(o, 'media_token') ?? str(o, 'token'), path: str(o, 'path'), contentType: str(o, 'content_type') });
  }
  return refs;
}

/** fetchShareAttachment (BridgeCommandHandler.kt:1940-1968) and RelayHttpClient.fetchMedia / fetchMediaByPath (:236-330, 330-380). */
async function fetchAttachment(r: Ref, ctx: AppContext): Promise<{ contentType: string } | { error: string }> {
  const media = r.media ?? '';
  let url: string;
  const base = httpUrl(ctx.relayUrl);
  const byPath = (p: string) =>
    `${base}/media/by-path?path=${encodeURIComponent(p)}${r.contentType ? `&content_type=${encodeURIComponent(r.contentType)}` : ''}`;
  if (media.startsWith('MEDIA:hermes-relay://')) url = `${base}/media/${encodeURIComponent(media.slice(21))}`;
  else if (media.startsWith('hermes-relay://')) url = `${base}/media/${encodeURIComponent(media.slice(15))}`;
  else if (media.startsWith('MEDIA:/') || media.startsWith('MEDIA:\\')) url = byPath(media.slice(6));
  else if (media.startsWith('MEDIA:')) url = `${base}/media/${encodeURIComponent(media.slice(6))}`;
  else if (media) url = `${base}/media/${encodeURIComponent(media)}`;
  else if (r.path) url = byPath(r.path);
  else return { error: 'attachment missing media token or path' };
  const res = await fetch(url, { headers: { authorization: `Bearer ${ctx.token}` } });
  await res.arrayBuffer();
  if (!res.ok) {
    const reason =
      res.status === 401 || res.status === 403
        ? 'Unauthorized — re-pair with the relay'
        : res.status === 404
          ? 'File expired or not found on relay'
          : res.status === 413
            ? 'File too large for relay'
            : res.status >= 500
              ? `Relay error (HTTP ${res.status})`
              : `HTTP ${res.status}: ${res.statusText || 'request failed'}`;
    return { error: reason };
  }
  return { contentType: res.headers.get('content-type')?.split(';')[0].trim() || 'application/octet-stream' };
}

/** `POST /media/upload` multipart with one `file` part, as accessibility/ScreenCapture.kt uploadViaMultipart does; returns the token. */
export async function uploadScreenshot(relayUrl: string, token: string | null, png: Buffer, now = Date.now()): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), `hermes-screenshot-${now}.png`);
  const res = await fetch(`${httpUrl(relayUrl)}/media/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
    body: form,
  });
  const raw = await res.text();
  if (res.status !== 200) throw new Error(`relay upload failed (HTTP ${res.status})`);
  const m = /"token"\s*:\s*"([^"]+)"/.exec(raw);
  if (!m) throw new Error('relay returned success but no token');
  return m[1];
}
