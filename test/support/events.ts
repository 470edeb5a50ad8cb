import { DAY, grantDurations } from '@svc/domain';
import type {
  BridgeActiveSelected,
  BridgeStatusReported,
  ClipboardStaged,
  ImageActivityReported,
  NewEvent,
  NotificationPosted,
  PairingCodeConsumed,
  PairingCodeRegistered,
  PhoneConnected,
  PhoneDisconnected,
  PersonalDataForgotten,
  PhoneMessageDelivered,
  PhoneMessageExpired,
  PhoneMessagePosted,
  PhoneRepliesHanded,
  PhoneReplyReceived,
  PhoneSubscribed,
  RateLimitBlocked,
  RelayStarted,
  SessionCreated,
  SessionRevoked,
  TerminalClosed,
  TerminalOpened,
  TerminalRecordingRemoved,
  TerminalRecordingSaved,
  TrustIssued,
  VoiceSessionCreated,
  VoiceSessionEnded,
  VoiceSynthesized,
  VoiceTranscribed,
} from '@svc/events';
import { at, T0 } from './given';

/**
 * Events the unit tests hand to `given` / `Given`, built with defaults so a test names only what it is
 * about. One phone unless told otherwise: token prefix `aaaa1111`, its device `dev-<prefix>`, its socket
 * `conn-<prefix>` (each derived from the prefix a test picks). Times default to T0.
 */

export const relayStarted = (over: Partial<RelayStarted['data']> = {}): NewEvent<RelayStarted> => ({
  type: 'relay.started',
  data: { version: '0', pid: 1, host: '127.0.0.1', port: 8767, tls: false, ...over },
});

/** A usable code, 10 minutes from T0, with the default terms of a 30-day pairing. */
export const pairingCodeRegistered = (over: Partial<PairingCodeRegistered['data']> = {}): NewEvent<PairingCodeRegistered> => ({
  type: 'pairing.code_registered',
  data: {
    codeDigest: 'c1',
    source: 'register',
    expiresAt: at(T0, 600).toISOString(),
    terms: { sessionTtlSeconds: 30 * DAY, grants: grantDurations(undefined), transportHint: null },
    ...over,
  },
});

export const pairingCodeConsumed = (over: Partial<PairingCodeConsumed['data']> = {}): NewEvent<PairingCodeConsumed> => {
  const tokenPrefix = over.tokenPrefix ?? 'aaaa1111';
  return { type: 'pairing.code_consumed', data: { codeDigest: 'c1', tokenPrefix, deviceId: `dev-${tokenPrefix}`, ...over } };
};

/** A paired session that never expires, with the `chat` grant only (name the grants a test needs). */
export const sessionCreated = (over: Partial<SessionCreated['data']> = {}): NewEvent<SessionCreated> => {
  const tokenPrefix = over.tokenPrefix ?? 'aaaa1111';
  return {
    type: 'session.created',
    data: {
      tokenDigest: `d-${tokenPrefix}`,
      tokenPrefix,
      deviceId: `dev-${tokenPrefix}`,
      deviceName: 'Phone',
      deviceModel: null,
      devicePlatform: null,
      transportHint: null,
      expiresAt: null,
      grants: { chat: null },
      ip: '127.0.0.1',
      ...over,
    },
  };
};

export const sessionRevoked = (over: Partial<SessionRevoked['data']> = {}): NewEvent<SessionRevoked> => ({
  type: 'session.revoked',
  data: { tokenPrefix: 'aaaa1111', by: 'operator', self: false, reason: 'revoked', ...over },
});

/**
 * A 180-day renewal for the default phone's device, bound to its session (prefix and token digest as
 * `sessionCreated` makes them), with the terms of a 30-day pairing; its refresh token's digest is `r1`.
 */
export const trustIssued = (over: Partial<TrustIssued['data']> = {}): NewEvent<TrustIssued> => {
  const tokenPrefix = over.tokenPrefix ?? 'aaaa1111';
  return {
    type: 'trust.issued',
    data: {
      trustId: 't1',
      deviceId: `dev-${tokenPrefix}`,
      tokenPrefix,
      tokenDigest: `d-${tokenPrefix}`,
      refreshDigest: 'r1',
      expiresAt: at(T0, 180 * DAY).toISOString(),
      terms: { sessionTtlSeconds: 30 * DAY, grants: grantDurations(undefined), transportHint: null },
      reason: 'paired',
      ...over,
    },
  };
};

export const phoneConnected = (over: Partial<PhoneConnected['data']> = {}): NewEvent<PhoneConnected> => {
  const tokenPrefix = over.tokenPrefix ?? 'aaaa1111';
  return {
    type: 'phone.connected',
    data: { connId: `conn-${tokenPrefix}`, tokenPrefix, deviceId: `dev-${tokenPrefix}`, ip: '127.0.0.1', path: '/ws', ...over },
  };
};

export const phoneDisconnected = (over: Partial<PhoneDisconnected['data']> = {}): NewEvent<PhoneDisconnected> => {
  const tokenPrefix = over.tokenPrefix ?? 'aaaa1111';
  return { type: 'phone.disconnected', data: { connId: `conn-${tokenPrefix}`, tokenPrefix, code: 1000, reason: '', ...over } };
};

/** A 120 s block of bad pairing codes from 198.51.100.7, written at T0. */
export const rateLimitBlocked = (over: Partial<RateLimitBlocked['data']> = {}): NewEvent<RateLimitBlocked> => ({
  type: 'ratelimit.blocked',
  data: { ip: '198.51.100.7', kind: 'code', until: at(T0, 120).toISOString(), ...over },
});

/** An offline-provider transcription by a phone's session that went well: 1 s of audio in 120 ms. */
export const voiceTranscribed = (over: Partial<VoiceTranscribed['data']> = {}): NewEvent<VoiceTranscribed> => ({
  type: 'voice.transcribed',
  data: { provider: 'offline', profile: null, via: 'session', outcome: 'ok', bytes: 32_000, audioMs: 1000, durationMs: 120, chars: 11, ...over },
});

/** An offline-provider synthesis by a phone's session that went well, in 80 ms. */
export const voiceSynthesized = (over: Partial<VoiceSynthesized['data']> = {}): NewEvent<VoiceSynthesized> => ({
  type: 'voice.synthesized',
  data: { provider: 'offline', profile: null, via: 'session', outcome: 'ok', chars: 20, bytes: 4000, durationMs: 80, ...over },
});

/** A voice output session `s1` on the offline provider, its connect window 60 s from T0. */
export const voiceSessionCreated = (over: Partial<VoiceSessionCreated['data']> = {}): NewEvent<VoiceSessionCreated> => ({
  type: 'voice.session_created',
  data: { sessionId: 's1', kind: 'output', profile: null, provider: 'offline', via: 'session', expiresAt: at(T0, 60).toISOString(), ...over },
});

export const voiceSessionEnded = (over: Partial<VoiceSessionEnded['data']> = {}): NewEvent<VoiceSessionEnded> => ({
  type: 'voice.session_ended',
  data: { sessionId: 's1', kind: 'output', reason: 'closed', chunks: 3, bytes: 9000, chars: 40, ...over },
});

/** Shell `s1` of the default phone opened (main, /bin/sh, 80x24). */
export const terminalOpened = (over: Partial<TerminalOpened['data']> = {}): NewEvent<TerminalOpened> => {
  const tokenPrefix = over.tokenPrefix ?? 'aaaa1111';
  return {
    type: 'terminal.opened',
    data: {
      shellId: 's1',
      sessionName: 'main',
      tokenPrefix,
      deviceId: `dev-${tokenPrefix}`,
      connId: `conn-${tokenPrefix}`,
      pid: 100,
      shell: '/bin/sh',
      cols: 80,
      rows: 24,
      ...over,
    },
  };
};

export const terminalClosed = (over: Partial<TerminalClosed['data']> = {}): NewEvent<TerminalClosed> => ({
  type: 'terminal.closed',
  data: { shellId: 's1', sessionName: 'main', tokenPrefix: 'aaaa1111', pid: 100, reason: 'exited', exitCode: 0, signal: null, ...over },
});

/** Shell `s1`'s recording saved: 1 KiB, 2 s, started at T0, output only. */
export const recordingSaved = (over: Partial<TerminalRecordingSaved['data']> = {}): NewEvent<TerminalRecordingSaved> => {
  const tokenPrefix = over.tokenPrefix ?? 'aaaa1111';
  const shellId = over.shellId ?? 's1';
  return {
    type: 'terminal.recording_saved',
    data: {
      recordingId: shellId,
      shellId,
      sessionName: 'main',
      tokenPrefix,
      deviceId: `dev-${tokenPrefix}`,
      startedAt: T0.toISOString(),
      durationMs: 2000,
      sizeBytes: 1024,
      sha256: '0'.repeat(64),
      input: false,
      truncated: false,
      ...over,
    },
  };
};

export const recordingRemoved = (over: Partial<TerminalRecordingRemoved['data']> = {}): NewEvent<TerminalRecordingRemoved> => ({
  type: 'terminal.recording_removed',
  data: { recordingId: 's1', reason: 'space', ...over },
});

/** Message `m1` in chat `c`, posted at T0: queued until 24 hours later (PHONE_QUEUE_TTL_SECONDS). */
export const messagePosted = (over: Partial<PhoneMessagePosted['data']> = {}): NewEvent<PhoneMessagePosted> => {
  const messageId = over.messageId ?? 'm1';
  return {
    type: 'phone.message_posted',
    data: {
      messageId,
      chatId: 'c',
      text: `text ${messageId}`,
      title: null,
      surfacing: null,
      replyTo: null,
      metadata: null,
      expiresAt: at(T0, 24 * 3600).toISOString(),
      ...over,
    },
  };
};

/** Message `m1` of chat `c` written to the default phone's socket from the backlog. */
export const messageDelivered = (over: Partial<PhoneMessageDelivered['data']> = {}): NewEvent<PhoneMessageDelivered> => {
  const tokenPrefix = over.tokenPrefix ?? 'aaaa1111';
  return {
    type: 'phone.message_delivered',
    data: { messageId: 'm1', chatId: 'c', connId: `conn-${tokenPrefix}`, tokenPrefix, queued: true, ...over },
  };
};

export const messageExpired = (over: Partial<PhoneMessageExpired['data']> = {}): NewEvent<PhoneMessageExpired> => ({
  type: 'phone.message_expired',
  data: { messageId: 'm1', chatId: 'c', ...over },
});

/** The default phone subscribed to proactive messages, sharing its status, replacing nobody. */
export const phoneSubscribed = (over: Partial<PhoneSubscribed['data']> = {}): NewEvent<PhoneSubscribed> => {
  const tokenPrefix = over.tokenPrefix ?? 'aaaa1111';
  return {
    type: 'phone.subscribed',
    data: { connId: `conn-${tokenPrefix}`, tokenPrefix, deviceName: 'Phone', sharePhoneStatus: true, replaced: null, ...over },
  };
};

/** Reply `r1` in chat `c` from the default phone over its socket. */
export const replyReceived = (over: Partial<PhoneReplyReceived['data']> = {}): NewEvent<PhoneReplyReceived> => {
  const replyId = over.replyId ?? 'r1';
  return {
    type: 'phone.reply_received',
    data: {
      replyId,
      chatId: 'c',
      text: `reply ${replyId}`,
      replyTo: null,
      tokenPrefix: 'aaaa1111',
      deviceName: 'Phone',
      via: 'ws',
      clientMsgId: null,
      ...over,
    },
  };
};

export const repliesHanded = (over: Partial<PhoneRepliesHanded['data']> = {}): NewEvent<PhoneRepliesHanded> => ({
  type: 'phone.replies_handed',
  data: { replyIds: ['r1'], by: 'operator', ...over },
});

/** Notification `n1` from package `a` on the default phone, no texts, no phone time. */
export const notificationPosted = (over: Partial<NotificationPosted['data']> = {}): NewEvent<NotificationPosted> => ({
  type: 'notification.posted',
  data: {
    entryId: 'n1',
    tokenPrefix: 'aaaa1111',
    deviceName: 'Phone',
    packageName: 'a',
    title: null,
    text: null,
    subText: null,
    postedAt: null,
    key: null,
    ...over,
  },
});

/** Call `c` of chat session `s` started generating an image. */
export const imageActivityReported = (over: Partial<ImageActivityReported['data']> = {}): NewEvent<ImageActivityReported> => ({
  type: 'chat.image_activity',
  data: { sessionId: 's', callId: 'c', status: 'started', progress: null, errorCode: null, ...over },
});

/** Image `i1` (a 1 KiB PNG) staged by the default phone at T0, stale 5 minutes later, superseding nothing. */
export const clipboardStaged = (over: Partial<ClipboardStaged['data']> = {}): NewEvent<ClipboardStaged> => {
  const entryId = over.entryId ?? 'i1';
  return {
    type: 'clipboard.staged',
    data: {
      entryId,
      fileName: `${entryId}.png`,
      format: 'png',
      sizeBytes: 1024,
      sha256: '0'.repeat(64),
      tokenPrefix: 'aaaa1111',
      staleAt: at(T0, 300).toISOString(),
      supersedes: [],
      ...over,
    },
  };
};

/**
 * The default phone's bridge status as the relay records it at T0: Device Control on, nothing trusted, the
 * relay keeping a 30-minute auto-disable deadline.
 */
export const bridgeStatusReported = (over: Partial<BridgeStatusReported['data']> = {}): NewEvent<BridgeStatusReported> => {
  const tokenPrefix = over.tokenPrefix ?? 'aaaa1111';
  return {
    type: 'bridge.status_reported',
    data: {
      tokenPrefix,
      connId: `conn-${tokenPrefix}`,
      deviceId: `dev-${tokenPrefix}`,
      deviceName: 'Phone',
      screenOn: true,
      battery: 80,
      currentApp: 'com.android.launcher3',
      accessibilityEnabled: true,
      masterEnabled: true,
      deviceControlSupported: true,
      trustedVerbs: [],
      autoDisableMinutes: 30,
      autoDisableAt: at(T0, 30 * 60).toISOString(),
      autoDisableBy: 'relay',
      ...over,
    },
  };
};

export const bridgeActiveSelected = (over: Partial<BridgeActiveSelected['data']> = {}): NewEvent<BridgeActiveSelected> => {
  const tokenPrefix = over.tokenPrefix ?? 'aaaa1111';
  return { type: 'bridge.active_selected', data: { tokenPrefix, deviceId: `dev-${tokenPrefix}`, by: 'operator', ...over } };
};

/** The operator forgot what device `aaaa1111` received: `keys` destroyed. */
export const personalForgotten = (over: Partial<PersonalDataForgotten['data']> = {}): NewEvent<PersonalDataForgotten> => ({
  type: 'personal.forgotten',
  data: { scope: 'device', device: 'aaaa1111', before: null, keys: [], ...over },
});
