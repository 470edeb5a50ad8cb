import { isObject, printable } from './frames';
import { httpUrl } from './urls';

/*
 * The app's Profiles: the catalog it is given in `auth.ok.profiles[]` (auth/AuthManager.kt:285-300, 613-630; each row
 * `{name, model, description, has_soul, skill_count, …}`), and the profile inspector's reads and SOUL save
 * (network/relay/RelayProfileInspectorClient.kt, RPIC below; paths under app/src/main/kotlin/com/hermesandroid/relay/):
 * `GET /api/profiles/{name}/config|soul|skills` together on open, `/memory` when its tab is shown
 * (viewmodel/ProfileInspectorViewModel.kt:347-373), each with the bearer and `Accept: application/json`, the name
 * percent-encoded with spaces as %20 (RPIC:427-479); Save is `PUT /api/profiles/{name}/soul {content}` without If-Match
 * (RPIC:104-130, 177-215; ProfileInspectorViewModel.kt:157-171). Answers are read no further than MAX_ANSWER.
 */

const MAX_ANSWER = 2 * 1024 * 1024;
/** The most profiles the simulator keeps from auth.ok (the relay offers far fewer). */
const MAX_PROFILES = 200;

export type CatalogRow = { name: string; model: string; description: string; hasSoul: boolean; skills: number };

/** `auth.ok.profiles` as the app keeps it: rows without a string `name` are dropped, the rest bounded. */
export function catalogOf(v: unknown): CatalogRow[] {
  if (!Array.isArray(v)) return [];
  const rows: CatalogRow[] = [];
  for (const p of v) {
    if (rows.length === MAX_PROFILES) break;
    if (!isObject(p) || typeof p.name !== 'string' || !p.name) continue;
    const s = (x: unknown) => (typeof x === 'string' ? x.slice(0, 500) : '');
    rows.push({
      name: p.name.slice(0, 128),
      model: s(p.model),
      description: s(p.description),
      hasSoul: p.has_soul === true,
      skills: typeof p.skill_count === 'number' && Number.isSafeInteger(p.skill_count) ? p.skill_count : 0,
    });
  }
  return rows;
}

export function catalogLines(rows: CatalogRow[]): string[] {
  if (rows.length === 0) return ['profiles: none offered'];
  return rows.map(
    (p) =>
      `profile ${printable(p.name, 128)}: ${printable(p.model || '(no model)', 100)}, ${p.skills} skill(s)${p.hasSoul ? ', SOUL' : ''}${p.description ? ` — ${printable(p.description, 120)}` : ''}`,
  );
}

type Answer = { ok: true; body: unknown } | { ok: false; error: string };

async function request(relayUrl: string, token: string, name: string, segment: string, put?: string): Promise<Answer> {
  const url = `${httpUrl(relayUrl)}/api/profiles/${encodeURIComponent(name)}/${segment}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: put === undefined ? 'GET' : 'PUT',
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json',
        ...(put === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' }),
      },
      ...(put === undefined ? {} : { body: JSON.stringify({ content: put }) }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    return { ok: false, error: printable((err as Error).message, 200) };
  }
  const text = await bounded(res);
  if (!res.ok) {
    // RPIC:472-479: what the inspector shows for each status.
    const reason =
      res.status === 401 || res.status === 403
        ? 'Unauthorized — re-pair with the relay'
        : res.status === 404
          ? `Profile '${printable(name, 128)}' not found on relay`
          : res.status >= 500
            ? `Relay error (HTTP ${res.status})`
            : `HTTP ${res.status}: ${printable((text ?? '').split('\n')[0] ?? '', 200)}`;
    return { ok: false, error: reason };
  }
  if (text === null) return { ok: false, error: `the answer was larger than ${MAX_ANSWER} bytes` };
  try {
    return { ok: true, body: JSON.parse(text) };
  } catch {
    return { ok: false, error: 'the answer is not JSON' };
  }
}

async function bounded(res: Response): Promise<string | null> {
  if (!res.body) return '';
  const chunks: Buffer[] = [];
  let size = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks).toString();
    size += value.byteLength;
    if (size > MAX_ANSWER) {
      await reader.cancel();
      return null;
    }
    chunks.push(Buffer.from(value));
  }
}

/** The inspector opened on NAME: config, SOUL and skills, then memory; one line each. */
export async function inspectProfile(relayUrl: string, token: string, name: string): Promise<{ lines: string[]; failed: boolean }> {
  const [config, soul, skills] = await Promise.all(['config', 'soul', 'skills'].map((s) => request(relayUrl, token, name, s)));
  const memory = await request(relayUrl, token, name, 'memory');
  const lines: string[] = [];
  let failed = false;
  const line = (what: string, a: Answer, ok: (b: Record<string, unknown>) => string) => {
    if (!a.ok || !isObject(a.body)) {
      failed = true;
      return lines.push(`profile ${printable(name, 128)} ${what}: ${a.ok ? 'not an object' : a.error}`);
    }
    lines.push(`profile ${printable(name, 128)} ${what}: ${ok(a.body)}`);
  };
  const count = (v: unknown) => (Array.isArray(v) ? v.length : 0);
  line('config', config, (b) => {
    const c = isObject(b.config) ? b.config : b;
    const model = isObject(c.model) ? c.model.default : c.model;
    return `model ${typeof model === 'string' ? printable(model, 100) : '?'}`;
  });
  line('SOUL', soul, (b) => {
    const content = typeof b.content === 'string' ? b.content : '';
    return `${content.length} characters${b.truncated === true ? ' (shown in part)' : ''}${content ? `: ${printable(content.split('\n')[0] ?? '', 120)}` : ''}`;
  });
  line('skills', skills, (b) => `${count(b.skills)} skill(s)`);
  line('memory', memory, (b) => {
    const files = Array.isArray(b.entries) ? b.entries : Array.isArray(b.files) ? b.files : [];
    const names = files.map((f) =>
      isObject(f) && typeof f.filename === 'string' ? f.filename : isObject(f) && typeof f.name === 'string' ? f.name : '?',
    );
    return `${files.length} file(s)${names.length ? `: ${printable(names.slice(0, 20).join(', '), 300)}` : ''}`;
  });
  return { lines, failed };
}

/** The inspector's Save on SOUL: the draft replaces SOUL.md (the relay needs the session's `chat` grant). */
export async function saveSoul(relayUrl: string, token: string, name: string, content: string): Promise<{ ok: boolean; line: string }> {
  const a = await request(relayUrl, token, name, 'soul', content);
  if (!a.ok) return { ok: false, line: `SOUL not saved: ${a.error}` };
  return { ok: true, line: `profile ${printable(name, 128)}: SOUL.md saved (${Buffer.byteLength(content)} bytes)` };
}
