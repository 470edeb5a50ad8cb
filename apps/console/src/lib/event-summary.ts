import type { ConsoleEvent, RelayEventType } from '@svc/console-api';

type D = Record<string, unknown>;
const str = (v: unknown): string => (typeof v === 'string' ? v : v === null || v === undefined ? '' : String(v));

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

export function actorLabel(actor: string): string {
  if (actor === 'operator') return 'operator';
  if (actor === 'system') return 'system';
  if (actor.startsWith('device:')) return `device ${actor.slice(7)}`;
  if (actor.startsWith('public:')) return `public ${actor.slice(7)}`;
  return actor;
}

/** One line in words for the log, the ticker and the overview. Unknown types fall back to their data. */
export function summary(e: ConsoleEvent): string {
  const d = e.data as D;
  // Typed by the relay's own union: a misspelt or retired type here fails `npm run check:console`.
  switch (e.type as RelayEventType) {
    case 'relay.started':
      return `relay ${str(d.version)} started on ${str(d.host)}:${str(d.port)}${d.tls ? ' (TLS)' : ''}${d.recovered ? ' after cutting a torn record' : ''}${d.staleLock ? '; the previous relay did not stop' : ''}`;
    case 'relay.stopping':
      return `relay stopping (${str(d.reason)})`;
    case 'pairing.code_registered':
      return `pairing code ${str(d.source === 'mint' ? 'minted' : d.source === 'env' ? 'registered from RELAY_PAIRING_CODE' : 'registered')}, ref ${ref(d.codeDigest)}`;
    case 'pairing.requested':
      return `pairing requested by ${str(d.deviceName) || 'an unnamed device'} from ${str(d.ip)}`;
    case 'pairing.approved':
      return `pairing request ${short(d.requestId)} approved`;
    case 'pairing.denied':
      return `pairing request ${short(d.requestId)} denied`;
    case 'pairing.code_consumed':
      return `code ${ref(d.codeDigest)} used by ${str(d.deviceId)} → session ${str(d.tokenPrefix)}`;
    case 'pairing.code_expired':
      return `pairing code ${ref(d.codeDigest)} expired unused`;
    case 'session.created':
      return `${str(d.deviceName)} paired (session ${str(d.tokenPrefix)})`;
    case 'session.shortened':
      return `session ${str(d.tokenPrefix)} shortened${d.expiresAt ? ` to ${str(d.expiresAt).slice(0, 16).replace('T', ' ')}` : ''}`;
    case 'session.revoked':
      return `session ${str(d.tokenPrefix)} ${
        d.reason === 'replaced'
          ? 'replaced by a re-pairing'
          : d.reason === 'abandoned'
            ? 'abandoned: the phone left before receiving its token'
            : d.reason === 'refresh_reuse'
              ? 'revoked: its refresh token was used after it had been replaced'
              : `revoked by ${actorLabel(str(d.by))}`
      }`;
    case 'trust.issued':
      return `${str(d.deviceId)} may renew its session until ${str(d.expiresAt).slice(0, 10)}${d.reason === 'adopted' ? ' (adopted on reconnect)' : ''}`;
    case 'trust.rotated':
      return d.reason === 'renewed'
        ? `session renewed as ${str(d.tokenPrefix)} (refresh token rotated)`
        : d.reason === 'abandoned'
          ? `renewal to ${str(d.tokenPrefix)} undone: the phone left before receiving it`
          : `refresh token reissued for ${str(d.tokenPrefix)}`;
    case 'trust.refused':
      return `renewal refused from ${str(d.ip)}: ${str(d.reason).replace('_', ' ')}`;
    case 'trust.reuse_detected':
      return `refresh token of ${str(d.deviceId)} reused from ${str(d.ip)}: the device is signed out`;
    case 'trust.ended':
      return `renewal of ${str(d.deviceId)} ended (${str(d.reason)}${d.by && d.by !== 'system' ? ` by ${actorLabel(str(d.by))}` : ''})`;
    case 'session.expired':
      return `session ${str(d.tokenPrefix)} expired`;
    case 'session.grant_expired':
      return `grant ${str(d.channel)} of ${str(d.tokenPrefix)} expired`;
    case 'session.device_updated':
      return `${str(d.tokenPrefix)} now describes itself as ${[d.deviceName, d.deviceModel, d.devicePlatform, d.clientSurface, d.deviceFormFactor]
        .filter((x) => typeof x === 'string' && x)
        .map(String)
        .join(' · ')}`;
    case 'session.seen':
      return `${str(d.tokenPrefix)} seen over ${str(d.via)} from ${str(d.ip)}`;
    case 'phone.connected':
      return `${str(d.tokenPrefix)} connected from ${str(d.ip)}`;
    case 'phone.disconnected':
      return `${str(d.tokenPrefix)} disconnected (${str(d.code)}${d.reason ? `: ${str(d.reason)}` : ''})`;
    case 'auth.failed':
      return `${str(d.kind)} rejected from ${str(d.ip)} over ${str(d.via)}: ${str(d.reason)}`;
    case 'ratelimit.blocked':
      return `${str(d.ip)} blocked until ${str(d.until).slice(11, 19)} (${str(d.kind)} failures)`;
    case 'ratelimit.cleared':
      return d.ip ? `rate-limit block on ${str(d.ip)} cleared` : `all rate-limit blocks cleared (${str(d.reason)})`;
    case 'terminal.opened':
      return `${str(d.tokenPrefix)} opened shell ${str(d.sessionName)} (${str(d.shell)}, pid ${str(d.pid)}, ${str(d.cols)}×${str(d.rows)})`;
    case 'terminal.reattached':
      return `${str(d.tokenPrefix)} re-attached shell ${short(d.shellId)}`;
    case 'terminal.detached':
      return `shell ${short(d.shellId)} detached (${str(d.reason)}), kept until ${str(d.graceUntil).slice(11, 19)}`;
    case 'terminal.closed':
      return `shell ${str(d.sessionName)} of ${str(d.tokenPrefix)} closed (${str(d.reason)}${d.exitCode !== null && d.exitCode !== undefined ? `, exit ${str(d.exitCode)}` : ''})`;
    case 'tui.started':
      return `${str(d.tokenPrefix)} started ${str(d.program)} (pid ${str(d.pid)})`;
    case 'tui.stopped':
      return `TUI of ${str(d.tokenPrefix)} stopped (${str(d.reason)})`;
    case 'phone.message_posted':
      return `message for ${str(d.chatId)}${d.title ? `: ${str(d.title)}` : ''} queued (${clip(d.text)})`;
    case 'phone.message_delivered':
      return `message ${short(d.messageId)} delivered to ${str(d.tokenPrefix)}${d.queued ? ' from the queue' : ''}`;
    case 'phone.message_dropped':
      return `message ${short(d.messageId)} dropped (${str(d.reason)})`;
    case 'phone.message_expired':
      return `message ${short(d.messageId)} expired undelivered`;
    case 'phone.message_cancelled':
      return `message ${short(d.messageId)} cancelled by ${actorLabel(str(d.by))}`;
    case 'phone.subscribed':
      return `${str(d.deviceName)} (${str(d.tokenPrefix)}) subscribed to Threads`;
    case 'phone.unsubscribed':
      return `${str(d.tokenPrefix)} unsubscribed from Threads`;
    case 'phone.backlog_flushed':
      return `${str(d.count)} queued message${d.count === 1 ? '' : 's'} sent to ${str(d.tokenPrefix)}${d.interrupted ? ' (interrupted)' : ''}`;
    case 'phone.reply_received':
      return `${str(d.deviceName)} replied in ${str(d.chatId)} (${clip(d.text)})`;
    case 'phone.replies_handed': {
      const n = Array.isArray(d.replyIds) ? d.replyIds.length : 0;
      return `${n} repl${n === 1 ? 'y' : 'ies'} handed to ${actorLabel(str(d.by))}`;
    }
    case 'notification.posted':
      return `${str(d.deviceName)}: notification from ${str(d.packageName)}${d.title ? ` “${clip(d.title)}”` : ''}`;
    case 'notification.removed':
      return `notification removed on ${str(d.tokenPrefix)}`;
    case 'clipboard.staged':
      return `${str(d.tokenPrefix)} staged ${str(d.fileName)} (${str(d.format)}, ${str(d.sizeBytes)} B) in the paste inbox`;
    case 'clipboard.consumed':
      return `paste inbox entry ${short(d.entryId)} read by ${str(d.by)}`;
    case 'clipboard.discarded':
      return `paste inbox entry ${short(d.entryId)} discarded (${str(d.reason)})`;
    case 'bridge.status_reported':
      return `${str(d.deviceName)} reports Device Control ${d.masterEnabled ? 'on' : 'off'}${d.currentApp ? `, in ${str(d.currentApp)}` : ''}${typeof d.battery === 'number' ? `, battery ${str(d.battery)}%` : ''}`;
    case 'bridge.active_selected':
      return `${str(d.deviceId)} (${str(d.tokenPrefix)}) selected as the active bridge device by ${actorLabel(str(d.by))}`;
    case 'bridge.command_sent':
      return `${str(d.method)} ${str(d.path)} sent to ${str(d.tokenPrefix)}`;
    case 'bridge.command_answered':
      return `${str(d.path)} answered ${str(d.status)} in ${str(d.latencyMs)} ms${d.currentApp ? `; the phone is in ${str(d.currentApp)}` : ''}`;
    case 'bridge.command_failed':
      return `${str(d.path)} failed: ${str(d.reason).replace('_', ' ')} after ${str(d.latencyMs)} ms`;
    case 'bridge.safety_decided':
      return `safety: ${str(d.decision).replace(/_/g, ' ')}${d.path ? ` on ${str(d.path)}` : ''}: ${str(d.reason)}`;
    case 'media.registered':
    case 'media.uploaded':
      return `${str(d.fileName) || str(d.path).split(/[\\/]/).pop() || 'a file'} (${str(d.contentType)}, ${str(d.size)} B) ${e.type === 'media.uploaded' ? 'uploaded' : 'registered'} as ${str(d.tokenPrefix)}${d.sensitive ? ', sensitive' : ''}`;
    case 'media.fetched':
      return `${d.via === 'token' ? `media ${str(d.tokenPrefix)}` : 'a file by path'} served (${str(d.status)}, ${str(Number(d.end) - Number(d.start) + 1)} B)`;
    case 'media.marked_sensitive':
      return `media ${str(d.tokenPrefix)} marked sensitive`;
    case 'media.refused':
      return `by-path fetch refused: ${str(d.reason)}`;
    case 'media.expired':
      return `media ${str(d.tokenPrefix)} expired`;
    case 'media.evicted':
      return `media ${str(d.tokenPrefix)} evicted (registry cap ${str(d.cap)})`;
    case 'media.retired':
      return `owned file ${d.deleted ? 'deleted' : 'kept'} (${str(d.reason)})`;
    case 'chat.image_activity':
      return `image activity ${str(d.status)}${typeof d.progress === 'number' ? ` ${Math.round(d.progress * 100)}%` : ''}${d.errorCode ? ` (${str(d.errorCode)})` : ''}`;
    default: {
      const text = JSON.stringify(e.data);
      return text.length > 120 ? `${text.slice(0, 117)}…` : text;
    }
  }
}

function ref(v: unknown): string {
  return str(v).replace('…', '');
}

function clip(v: unknown, n = 60): string {
  const t = str(v).replace(/\s+/g, ' ');
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
}

function short(v: unknown): string {
  return str(v).slice(0, 8);
}
