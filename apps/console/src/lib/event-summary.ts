import type { ConsoleEvent, RelayEventType } from '@svc/console-api';
import type { DataOf } from '@svc/events/relay-event';
import { bytes, duration, plural } from './format';

/** The event families the log colours by (the part before the first dot). */
export function family(type: string): string {
  return type.split('.')[0];
}

/** The session (token prefix) an event concerns, if any: the link from an event to its device. */
export function deviceOf(e: ConsoleEvent): string | null {
  const p = e.data.tokenPrefix;
  if (typeof p === 'string') return p;
  return e.actor.startsWith('device:') ? e.actor.slice(7) : null;
}

/**
 * Who did it, in words. `type`: the event's, when known: a Thread message the host posted is the agent's
 * (its loopback call is recorded as the operator's), the word the Threads page uses.
 */
export function actorLabel(actor: string, type?: string): string {
  if (actor === 'operator' && type === 'phone.message_posted') return 'agent';
  if (actor === 'operator') return 'operator';
  if (actor === 'system') return 'system';
  if (actor.startsWith('device:')) return `device ${actor.slice(7)}`;
  if (actor.startsWith('public:')) return `public ${actor.slice(7)}`;
  // A Thread reply that answered android_hand_over is taken by it (libs/domain bridge/hand-over.ts).
  if (actor.startsWith('hand_over:')) return `the hand-over ${actor.slice(10, 18)}`;
  return actor;
}

type Summarize<T extends RelayEventType> = (d: DataOf<T>, e: ConsoleEvent) => string;

/**
 * One line in words per event type, for the log, the ticker and the overview. Keyed by the relay's own
 * union: a type added without a line here fails `npm run check:console`, and the console test that reads
 * the union's types fails too. Never message or notification text, titles or any secret: what happened,
 * to which device, how big and how long.
 */
export const SUMMARIES: { readonly [T in RelayEventType]: Summarize<T> } = {
  'relay.started': (d) =>
    `relay ${d.version} started on ${d.host}:${d.port}${d.tls ? ' (TLS)' : ''}${d.recovered ? ' after cutting a torn record' : ''}${d.staleLock ? '; the previous relay did not stop' : ''}`,
  'relay.stopping': (d) => `relay stopping (${d.reason})`,
  'relay.leader_changed': (d) => `standby took over the log: epoch ${d.previousEpoch} → ${d.epoch}, now led by ${d.holder}`,
  'log.pruned': (d) =>
    `log cut at #${d.cutSeq} (${d.cutAt}): ${d.segments.length} segment(s) ${d.archive === null ? 'deleted' : `archived to ${d.archive}`} by ${d.by}; start-up restores snapshot #${d.snapshotSeq}`,
  'store.checkpoint_signed': (d) => `checkpoint of #${d.seq} (hash ${d.hash.slice(0, 12)}…) signed with key ${d.keyId} by ${actorLabel(d.by)}`,
  'relay.security_changed': (d) =>
    d.allowInsecureApiBearer ? 'API-key voice over plain HTTP allowed from other hosts until restart' : 'API-key voice over plain HTTP refused again',

  'pairing.code_registered': (d) =>
    `pairing code ${d.source === 'mint' ? 'minted' : d.source === 'env' ? 'registered from RELAY_PAIRING_CODE' : 'registered'}, ref ${ref(d.codeDigest)}`,
  'pairing.requested': (d) => `pairing requested by ${d.deviceName || 'an unnamed device'} from ${d.ip}`,
  'pairing.approved': (d) => `pairing request ${short(d.requestId)} approved`,
  'pairing.denied': (d) => `pairing request ${short(d.requestId)} denied`,
  'pairing.code_consumed': (d) => `code ${ref(d.codeDigest)} used by ${d.deviceId} → session ${d.tokenPrefix}`,
  'pairing.code_expired': (d) => `pairing code ${ref(d.codeDigest)} expired unused`,

  'session.created': (d) => `${d.deviceName} paired (session ${d.tokenPrefix})`,
  'session.shortened': (d) => `session ${d.tokenPrefix} shortened${d.expiresAt ? ` to ${minute(d.expiresAt)}` : ''}`,
  'session.revoked': (d) =>
    `session ${d.tokenPrefix} ${
      d.reason === 'replaced'
        ? 'replaced by a re-pairing'
        : d.reason === 'abandoned'
          ? 'abandoned: the phone left before receiving its token'
          : d.reason === 'refresh_reuse'
            ? 'revoked: its refresh token was used after it had been replaced'
            : `revoked by ${actorLabel(d.by)}`
    }`,
  'session.expired': (d) => `session ${d.tokenPrefix} expired`,
  'session.grant_expired': (d) => `grant ${d.channel} of ${d.tokenPrefix} expired`,
  'session.device_updated': (d) =>
    `${d.tokenPrefix} now describes itself as ${[d.deviceName, d.deviceModel, d.devicePlatform, d.clientSurface, d.deviceFormFactor]
      .filter((x) => typeof x === 'string' && x)
      .join(' · ')}`,
  'session.seen': (d) => `${d.tokenPrefix} seen over ${d.via} from ${d.ip}`,

  'trust.issued': (d) => `${d.deviceId} may renew its session until ${day(d.expiresAt)}${d.reason === 'adopted' ? ' (adopted on reconnect)' : ''}`,
  'trust.rotated': (d) =>
    d.reason === 'renewed'
      ? `session renewed as ${d.tokenPrefix} (refresh token rotated)`
      : d.reason === 'abandoned'
        ? `renewal to ${d.tokenPrefix} undone: the phone left before receiving it`
        : `refresh token reissued for ${d.tokenPrefix}`,
  'trust.refused': (d) => `renewal refused from ${d.ip}: ${words(d.reason)}`,
  'trust.reuse_detected': (d) => `refresh token of ${d.deviceId} reused from ${d.ip}: the device is signed out`,
  'trust.ended': (d) => `renewal of ${d.deviceId} ended (${d.reason}${d.by && d.by !== 'system' ? ` by ${actorLabel(d.by)}` : ''})`,

  'console.link_issued': (d) => `console sign-in link issued (usable once until ${time(d.expiresAt)})`,
  'console.signed_in': (d) => `a browser signed in to the console (until ${time(d.expiresAt)})`,
  'console.signed_out': () => 'a browser signed out of the console',

  'auth.failed': (d) => `${d.kind} rejected from ${d.ip} over ${d.via}: ${d.reason}`,
  'ratelimit.blocked': (d) => `${d.ip} blocked until ${time(d.until)} after too many bad ${d.kind === 'code' ? 'pairing codes' : 'session tokens'}`,
  'ratelimit.cleared': (d) => (d.ip ? `rate-limit block on ${d.ip} lifted (${d.reason})` : `every rate-limit block lifted (${d.reason})`),

  'phone.connected': (d) => `${d.tokenPrefix} connected from ${d.ip}`,
  'phone.disconnected': (d) => `${d.tokenPrefix} disconnected (${d.code}${d.reason ? `: ${d.reason}` : ''})`,
  'phone.message_posted': (d) => `message for chat ${d.chatId} queued${d.surfacing && d.surfacing !== 'default' ? ` (as ${d.surfacing})` : ''}`,
  'phone.message_delivered': (d) => `message ${short(d.messageId)} delivered to ${d.tokenPrefix}${d.queued ? ' from the queue' : ''}`,
  'phone.message_dropped': (d) => `message ${short(d.messageId)} dropped (${words(d.reason)})`,
  'phone.message_expired': (d) => `message ${short(d.messageId)} expired undelivered`,
  'phone.message_cancelled': (d) => `message ${short(d.messageId)} cancelled by ${actorLabel(d.by)}`,
  'phone.subscribed': (d) => `${d.deviceName} (${d.tokenPrefix}) subscribed to Threads`,
  'phone.unsubscribed': (d) => `${d.tokenPrefix} unsubscribed from Threads`,
  'phone.backlog_flushed': (d) =>
    `${plural(d.count, 'queued message')} sent to ${d.tokenPrefix}${d.interrupted ? ` (interrupted, ${d.remaining} left)` : ''}`,
  'phone.reply_received': (d) => `${d.deviceName} replied in chat ${d.chatId}`,
  'phone.replies_handed': (d, e) =>
    `${plural(Array.isArray(d.replyIds) ? d.replyIds.length : 0, 'reply', 'replies')} handed to ${actorLabel(d.by ?? e.actor)}`,

  'notification.posted': (d) => `${d.deviceName}: a notification from ${d.packageName}`,
  'notification.removed': (d) => `a notification removed on ${d.tokenPrefix}`,
  'clipboard.staged': (d) => `${d.tokenPrefix} staged a ${String(d.format).toUpperCase()} image (${bytes(d.sizeBytes)}) in the paste inbox`,
  'clipboard.consumed': (d) => `paste inbox entry ${short(d.entryId)} read by ${actorLabel(d.by)}`,
  'clipboard.discarded': (d) => `paste inbox entry ${short(d.entryId)} discarded (${d.reason})`,
  'chat.image_activity': (d) =>
    `image generation ${d.status}${typeof d.progress === 'number' ? ` ${Math.round(d.progress * 100)}%` : ''}${d.errorCode ? ` (${d.errorCode})` : ''}`,

  'terminal.opened': (d) => `${d.tokenPrefix} opened shell ${d.sessionName} (${d.shell}, pid ${d.pid}, ${d.cols}×${d.rows})`,
  'terminal.reattached': (d) => `${d.tokenPrefix} re-attached shell ${short(d.shellId)}`,
  'terminal.detached': (d) => `shell ${short(d.shellId)} detached (${d.reason}), kept until ${time(d.graceUntil)}`,
  'terminal.closed': (d, e) =>
    `shell ${d.sessionName} of ${d.tokenPrefix} ${e.actor === 'operator' ? 'ended by the operator' : `closed (${words(d.reason)})`}${
      d.exitCode !== null && d.exitCode !== undefined ? `, exit ${d.exitCode}` : ''
    }`,
  'terminal.recording_saved': (d) =>
    `recording of shell ${d.sessionName || short(d.shellId)}${d.tokenPrefix ? ` of ${d.tokenPrefix}` : ''} saved (${bytes(d.sizeBytes)}, ${duration(d.durationMs / 1000)}${
      d.input ? ', with input' : ''
    }${d.truncated ? `, truncated${d.stopped ? ` (${words(d.stopped)})` : ''}` : ''}${d.recovered ? ', recovered at start' : ''})`,
  'terminal.recording_removed': (d) =>
    `recording ${short(d.recordingId)} removed (${
      d.reason === 'space' ? 'oldest out past the total cap' : d.reason === 'forgotten' ? "its device's content forgotten" : 'its file was gone'
    })`,
  'tui.started': (d) => `${d.tokenPrefix} started ${d.program} (pid ${d.pid})`,
  'tui.stopped': (d) => `TUI of ${d.tokenPrefix} stopped (${words(d.reason)})`,

  'bridge.status_reported': (d) =>
    `${d.deviceName} reports Device Control ${d.masterEnabled ? 'on' : 'off'}${d.currentApp ? `, in ${d.currentApp}` : ''}${typeof d.battery === 'number' ? `, battery ${d.battery}%` : ''}`,
  'bridge.active_selected': (d) => `${d.deviceId} (${d.tokenPrefix}) selected as the active bridge device by ${actorLabel(d.by)}`,
  'bridge.command_sent': (d) => `${d.method} ${d.path} sent to ${d.tokenPrefix}`,
  'bridge.command_answered': (d) => `${d.path} answered ${d.status} in ${d.latencyMs} ms${d.currentApp ? `; the phone is in ${d.currentApp}` : ''}`,
  'bridge.command_failed': (d) => `${d.path} failed: ${words(d.reason)} after ${d.latencyMs} ms`,
  'bridge.safety_decided': (d) => `safety: ${words(d.decision)}${d.path ? ` on ${d.path}` : ''}: ${d.reason}`,

  'media.registered': (d) =>
    `${d.fileName || basename(d.path) || 'a file'} (${d.contentType}, ${bytes(d.size)}) registered as ${d.tokenPrefix}${d.sensitive ? ', sensitive' : ''}`,
  'media.uploaded': (d) => `a ${d.contentType} upload (${bytes(d.size)}) registered as ${d.tokenPrefix}${d.sensitive ? ', sensitive' : ''}`,
  'media.fetched': (d) =>
    `${d.via === 'token' ? `media ${d.tokenPrefix}` : 'a file by path'} served (${d.status}, ${bytes(Math.max(0, Number(d.end) - Number(d.start) + 1))})`,
  'media.marked_sensitive': (d) => `media ${d.tokenPrefix} marked sensitive`,
  'media.refused': (d) => `by-path fetch refused: ${d.reason}`,
  'media.expired': (d) => `media ${d.tokenPrefix} expired`,
  'media.evicted': (d) => `media ${d.tokenPrefix} evicted (registry cap ${d.cap})`,
  'media.retired': (d) => `owned file ${d.deleted ? 'deleted' : 'kept'} (${d.reason})`,

  'voice.settings_changed': (d) =>
    `${SECTION[d.section] ?? d.section} settings changed${d.scope === 'profile' && d.profile ? ` for profile ${d.profile}` : ' for the relay'}: ${Object.keys(d.changed ?? {}).join(', ') || 'nothing'}`,
  'voice.transcribed': (d) =>
    d.outcome === 'ok'
      ? `${d.audioMs !== null ? `${(d.audioMs / 1000).toFixed(1)} s of audio` : `${bytes(d.bytes)} of audio`} transcribed by ${d.provider} in ${d.durationMs} ms${via(d.via)}`
      : `transcription by ${d.provider} failed after ${d.durationMs} ms${d.error ? ` (${clip(d.error)})` : ''}${via(d.via)}`,
  'voice.synthesized': (d) =>
    d.outcome === 'ok'
      ? `${plural(d.chars, 'character')} spoken by ${d.provider} in ${d.durationMs} ms (${bytes(d.bytes)})${via(d.via)}`
      : `speech by ${d.provider} failed after ${d.durationMs} ms${d.error ? ` (${clip(d.error)})` : ''}${via(d.via)}`,
  'voice.session_created': (d) => `${KIND[d.kind] ?? d.kind} session ${short(d.sessionId)} opened on ${d.provider}${via(d.via)}`,
  'voice.session_detached': (d) => `voice session ${short(d.sessionId)} dropped (close ${d.code}), held for a resume until ${time(d.resumeUntil)}`,
  'voice.session_resumed': (d) => `voice session ${short(d.sessionId)} resumed (${plural(d.replayed, 'frame')} sent again)`,
  'voice.session_ended': (d) => `voice session ${short(d.sessionId)} ended (${words(d.reason)}): ${plural(d.chunks, 'chunk')}, ${bytes(d.bytes)}`,

  'profile.file_written': (d) => `profile ${d.profile}: ${d.file} ${d.replaced ? 'rewritten' : 'created'} (${bytes(d.bytes)})`,
  'profile.catalog_changed': (d) =>
    `profile catalog ${d.reason === 'startup' ? 'read at start' : `changed (${words(d.reason)})`}: ${d.offered} of ${plural(Array.isArray(d.profiles) ? d.profiles.length : 0, 'profile')} offered to phones`,
  'profile.relay_enabled': (d) => `relay plugin enabled for profile ${d.profile} (was ${d.was}; the previous config kept as ${basename(d.backup)})`,

  'desktop.client_reported': (d) =>
    `${d.deviceName} serves ${plural(d.toolCount ?? d.tools?.length ?? 0, 'desktop tool')}${d.host ? ` on ${d.host}` : ''}${d.computerUse ? ', computer use included' : ''}`,
  'desktop.context_reported': (d) =>
    d.kind === 'workspace'
      ? `${d.tokenPrefix} works in ${d.workspace.repoName ?? 'a folder outside git'}${d.workspace.gitBranch ? ` on ${d.workspace.gitBranch}` : ''}`
      : `${d.tokenPrefix} is in ${d.activeEditor.editor ?? d.activeEditor.source}`,
  'desktop.command_sent': (d) => `desktop tool ${d.tool} called on ${d.tokenPrefix}`,
  'desktop.command_completed': (d) => `desktop tool ${d.tool} on ${d.tokenPrefix}: ${words(d.outcome)} in ${d.durationMs} ms`,
  'desktop.control_session_started': (d) => `computer-use control session ${short(d.controlId)} opened on ${d.targetDeviceId}`,
  'desktop.control_session_ended': (d) => `computer-use control session ${short(d.controlId)} ended (${words(d.reason)})`,

  'secure_link.started': (d) =>
    `Secure Link serves phones at ${d.url} (pin ${d.pin.slice(0, 12)}…, certificate until ${day(d.notAfter)})${d.created ? ', a new identity' : ''}`,
  'secure_link.identity_changed': () => 'Secure Link identity changed: phones paired through it must pair again',
  'secure_link.unavailable': (d) => `Secure Link could not start: ${d.reason}`,
  'secure_link.reach_changed': (d) => `Reach ${d.state}${d.hostId ? ` (host ${d.hostId})` : ''}${d.error ? `: ${clip(d.error)}` : ''}`,

  'personal.forgotten': (d) =>
    `forgot personal content ${FORGET_SCOPE[d.scope] ?? d.scope}${d.device ? ` ${d.device}` : ''}${d.before ? ` before ${minute(d.before)}Z` : ''}: ${plural(d.keys.length, 'key')} destroyed`,
  // Never the value: the console's events come without it (console-redaction.ts withoutPersonal).
  'secret.set': (d) => `secret ${d.name} ${d.replaced ? 'replaced' : 'registered'} (its value sealed)`,
};

const FORGET_SCOPE: Record<string, string> = {
  device: 'of device',
  before: '',
  retention: 'past retention,',
  revoked: 'of revoked device',
  secret: 'of',
};

/** One line in words for the log, the ticker and the overview. */
export function summary(e: ConsoleEvent): string {
  const summarize = Object.prototype.hasOwnProperty.call(SUMMARIES, e.type)
    ? (SUMMARIES[e.type as RelayEventType] as (d: never, e: ConsoleEvent) => string)
    : null;
  // A type a newer relay wrote: named, never dumped (its data may hold what a summary would leave out).
  if (!summarize) return `${e.type} (this console has no words for it yet; open it for its fields)`;
  try {
    return summarize(e.data as never, e);
  } catch {
    // An older record missing a field this console reads: still one line.
    return `${e.type} (a record this console cannot read in words; open it for its fields)`;
  }
}

const SECTION: Record<string, string> = { voice_output: 'voice output', realtime_voice: 'realtime voice', realtime_agent: 'realtime agent' };
const KIND: Record<string, string> = { output: 'voice output', realtime: 'realtime voice', realtime_agent: 'realtime agent' };

const via = (v: string): string => (v === 'api' ? ' (API key)' : '');
const words = (v: unknown): string => String(v ?? '').replace(/_/g, ' ');
const ref = (v: unknown): string => String(v ?? '').replace('…', '');
const short = (v: unknown): string => String(v ?? '').slice(0, 8);
const time = (iso: string): string => String(iso).slice(11, 19);
const minute = (iso: string): string => String(iso).slice(0, 16).replace('T', ' ');
const day = (iso: string): string => String(iso).slice(0, 10);
const basename = (p: string | null | undefined): string =>
  String(p ?? '')
    .split(/[\\/]/)
    .pop() ?? '';

function clip(v: unknown, n = 60): string {
  const t = String(v ?? '').replace(/\s+/g, ' ');
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
}
