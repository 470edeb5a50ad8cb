import { Inject, Injectable, OnApplicationShutdown, OnModuleInit, Optional } from '@nestjs/common';
import {
  clientNames,
  actorOf,
  autoDisableDue,
  autoDisableSide,
  cancelConfirmations,
  canonicalPath,
  confirmationSide,
  confirmationText,
  DEFAULT_SCREEN,
  bridgeStatusOf,
  screenAsAsked,
  screenSizeShown,
  toPhoneCommand,
  type ScreenSize,
  DomainError,
  expireConfirmations,
  pickDevice,
  planCommand,
  reportStatus,
  resolveConfirmation,
  secretLabel,
  selectActive,
  statusTightens,
  type BridgeDevice,
  type Driver,
  type SafetySettings,
} from '@svc/domain';
import type { BridgeFailure, SafetyDecisionKind } from '@svc/events';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import { Clock } from '../common/loop/clock';
import type { RelayConfig } from '../common/config/relay-config';
import { CommandLoop } from '../common/loop/command-loop';
import { MEDIA_REGISTRAR, type MediaRegistrar } from '../common/media-registrar';
import { readFrame } from '../common/sockets/parse-frame';
import { ReportWindow } from '../common/loop/report-window';
import { Scheduler } from '../common/loop/scheduler';
import { LOGGER, RELAY_CONFIG } from '../common/auth/tokens';
import { ChannelRouter } from '../phone-socket/channel-router';
import { AgentConfirmations, type CommandFrom } from './agent-confirmations';
import { BridgeMedia } from './bridge-media';
import { ScreenEvidence, type EvidencePhone } from './bridge-evidence';
import { BridgeStatusFrame, ConfirmResultFrame } from './bridge-frames.dto';
import { commandAnswered, commandFailed } from './command-outcome';
import { CONFIRM_OUTCOMES, confirmationDenied, phoneGone, phoneTimedOut, planOf, refusal, safetySettingsOf } from './bridge-plan';
import { foregroundShown, readBridgeResponse } from './bridge-response';
import { pickSelector, withoutSelectors } from './device-selector';
import { InFlightCommands, type CommandReply, type OutgoingCommand, type SentCommand } from './in-flight-commands';
import { secretScrubber } from './secret-command';
import type { Envelope } from '../phone-socket/envelope';
import type { PhoneConnection } from '../phone-socket/phone-connection';
import { PhoneHub } from '../phone-socket/phone-hub.service';

export type { CommandReply } from './in-flight-commands';

/** A phone's restated `bridge.status` is written at most once per window per socket (changes that take something away at once). */
export const BRIDGE_STATUS_WINDOW_MS = 1000;

/**
 * The bridge channel and the Device Control proxy: resolves the phone, runs the safety pipeline (every
 * decision an event), forwards `bridge.command`, correlates `bridge.response` by request id and socket.
 */
@Injectable()
export class BridgeService implements OnModuleInit, OnApplicationShutdown {
  private readonly inFlightCommands = new InFlightCommands();
  /** Screen sizes `/screen` answers showed, per token prefix: a swipe by direction becomes coordinates with it. */
  private readonly screens = new Map<string, ScreenSize>();
  private readonly subs: Subscription[] = [];
  private readonly files: BridgeMedia;
  readonly settings: SafetySettings;
  private readonly statusReports: ReportWindow;
  private readonly agents: AgentConfirmations;
  private readonly evidence: ScreenEvidence;

  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    private readonly hub: PhoneHub,
    router: ChannelRouter,
    scheduler: Scheduler,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Optional() @Inject(MEDIA_REGISTRAR) media?: MediaRegistrar,
  ) {
    this.files = new BridgeMedia(media, clock, clientNames(config.clientSpelling));
    const b = config.bridge;
    this.settings = safetySettingsOf(b);
    this.statusReports = new ReportWindow(BRIDGE_STATUS_WINDOW_MS, (err, connId) =>
      this.logger[err instanceof DomainError ? 'debug' : 'warn']({ err: err.message, conn: connId }, 'bridge status not recorded'),
    );
    this.evidence = new ScreenEvidence(
      b.evidence,
      b.commandTimeoutMs,
      (phone, timeoutMs) =>
        this.send(phone, { requestId: randomUUID(), method: 'GET', path: '/screen_hash', params: {}, body: {} }, { quiet: true, timeoutMs }),
      { models: loop.models, blocklist: this.settings.blocklist },
    );
    loop.models.bridge.trails.keepAtMost(b.mcpTrails);
    this.agents = new AgentConfirmations(loop, clock, this.inFlightCommands, this.settings, b.confirmTimeoutSeconds, logger);
    router.register('bridge', { onFrame: (c, e) => this.onFrame(c, e), onClose: (c) => this.onClose(c) });
    scheduler.register('bridge.confirmations', (m, now) => expireConfirmations(m, now));
    scheduler.register('bridge.auto_disable', (m, now) => autoDisableDue(m, now));
  }

  onModuleInit(): void {
    this.subs.push(
      this.loop.bus.ofType('bridge.safety_decided').subscribe((e) => {
        const d = e.data;
        if (d.requestId && CONFIRM_OUTCOMES.has(d.decision)) {
          this.inFlightCommands.endConfirmation(d.requestId)?.resolve(d.decision);
        }
        if (d.decision === 'auto_disabled') {
          const dev = this.loop.models.bridge.device(d.tokenPrefix);
          // Only a phone that said it honours the frame gets it (app-wire.ts autoDisableSide).
          const conn = dev?.autoDisableBy === 'relay' ? this.connOf(dev) : undefined;
          conn?.send('bridge', 'bridge.master_disabled', { reason: 'auto_disable', idle_minutes: d.idleMinutes ?? null, message: d.reason });
        }
      }),
    );
  }

  onApplicationShutdown(): void {
    this.statusReports.dropAll();
    for (const s of this.subs) s.unsubscribe();
    for (const p of this.inFlightCommands.sentCommands()) {
      this.inFlightCommands.settle(p);
      clearTimeout(p.timer);
      p.reject(new DomainError('bridge.relay_stopping', 'unavailable', 'the relay is stopping'));
    }
  }

  get inFlight(): number {
    return this.inFlightCommands.sentCount;
  }

  // ---- phone side ------------------------------------------------------------------------------

  private async onFrame(conn: PhoneConnection, env: Envelope): Promise<void> {
    switch (env.type) {
      case 'bridge.status':
      case 'status':
        return this.onStatus(conn, env);
      case 'bridge.response':
      case 'response':
        return this.onResponse(conn, env);
      case 'bridge.confirm.result':
      case 'confirm.result':
        return this.onConfirmResult(conn, env);
      default:
        conn.error(`unknown bridge message "${env.type}"`, 'unknown_type', { channel: 'bridge' }, env.id);
    }
  }

  private async onStatus(conn: PhoneConnection, env: Envelope): Promise<void> {
    const st = bridgeStatusOf(readFrame(BridgeStatusFrame, env.payload));
    const principal = conn.principal!;
    // A restated status is written at most once a second per socket (the latest), unless it takes something away.
    const urgent = statusTightens(this.loop.models.bridge.device(principal.tokenPrefix), st, this.settings.blocklist);
    const write = () =>
      this.loop.run(`device:${principal.tokenPrefix}`, (m, now) =>
        reportStatus(
          m,
          {
            tokenPrefix: principal.tokenPrefix,
            connId: conn.id,
            deviceId: principal.deviceId,
            deviceName: principal.deviceName,
            ...st,
            autoDisableBy: autoDisableSide(conn.supports),
          },
          this.config.bridge.autoDisableMinutes,
          now,
        ),
      );
    return this.statusReports.submit(conn.id, 'status', write, urgent);
  }

  private async onResponse(conn: PhoneConnection, env: Envelope): Promise<void> {
    // By hand, not through parseFrame: measured 6-15 µs for a small answer and 2-11 ms for a 500-node /screen (~95 KB); this, under 0.2 µs.
    const p = env.payload;
    const id = typeof p.request_id === 'string' ? p.request_id : null;
    const pending = id ? this.inFlightCommands.command(id) : undefined;
    // Only the socket the command went to may answer it; anything else is ignored (and said so).
    if (!pending || pending.connId !== conn.id) {
      this.logger.debug({ conn: conn.id }, 'bridge.response for no command in flight on this socket: ignored');
      return;
    }
    const answer = readBridgeResponse(pending.path, p);
    if (!answer.ok) return void this.fail(pending, 'bad_response', answer.error);
    const { status, screenshot } = answer;
    const body = pending.scrub ? pending.scrub(answer.body) : answer.body;
    this.settle(pending);
    if (pending.quiet) return pending.resolve({ status, body });
    const seen = status < 300 ? foregroundShown(pending.path, body) : null;
    if (pending.path === '/screen' && status < 300) {
      const size = screenSizeShown(body);
      if (size) this.screens.set(pending.tokenPrefix, size);
    }
    const known = this.loop.models.bridge.device(pending.tokenPrefix)?.currentApp ?? null;
    // Not awaited: frames of one socket are handled in order, and the next response must not wait for
    // this one's fsync. The log keeps the order; the caller is answered once the event is durable.
    void this.answered(pending, status, body, seen !== null && seen !== known ? seen : undefined)
      .then(async () => {
        if (screenshot && 'uploaded' in screenshot)
          return pending.resolve(await this.files.uploadedScreenshot(pending.requestId, screenshot.uploaded, body));
        pending.resolve({
          status,
          body: screenshot ? await this.files.storeScreenshot(pending.requestId, pending.tokenPrefix, screenshot.png, body) : body,
        });
      })
      .catch((err: Error) => pending.reject(err));
  }

  private async onConfirmResult(conn: PhoneConnection, env: Envelope): Promise<void> {
    const { request_id: requestId, allow } = readFrame(ConfirmResultFrame, env.payload);
    const w = this.inFlightCommands.confirmation(requestId);
    if (!w || w.connId !== conn.id) return;
    await this.loop.run(`device:${w.tokenPrefix}`, (m) => resolveConfirmation(m, { requestId, tokenPrefix: w.tokenPrefix, allow }));
  }

  private onClose(conn: PhoneConnection): void {
    this.statusReports.drop(conn.id);
    const prefix = conn.principal?.tokenPrefix;
    if (!prefix) return;
    const revoked = !this.loop.models.sessions.byTokenPrefix(prefix);
    for (const p of this.inFlightCommands.sentCommands()) {
      if (p.connId !== conn.id) continue;
      const reason: BridgeFailure = revoked ? 'session_revoked' : 'phone_gone';
      void this.fail(
        p,
        reason,
        phoneGone(revoked ? "the phone's session was revoked while the command was in flight" : 'the phone disconnected before answering'),
      );
    }
    const waiting = this.inFlightCommands.confirmationsOn(conn.id);
    if (waiting.length > 0) {
      this.loop
        .run(`device:${prefix}`, (m) => cancelConfirmations(m, prefix, waiting))
        .catch((err: Error) => this.logger.warn({ err: err.message }, 'confirmation cancel not recorded'));
    }
  }

  // ---- HTTP side -------------------------------------------------------------------------------

  /**
   * One Device Control call, from validated input to the phone's answer (or a clear refusal); `driver`: who
   * calls and from where (which phones it may drive: bridge-authority.ts); `from`: not over HTTP.
   */
  async command(driver: Driver, method: 'GET' | 'POST', rawPath: string, query: object, body: object, from?: CommandFrom): Promise<CommandReply> {
    const path = canonicalPath(rawPath);
    const params = withoutSelectors(query);
    const payload = withoutSelectors(body);
    const selector = pickSelector(query) ?? pickSelector(body);
    const actor = actorOf(driver.caller);
    const device = pickDevice(this.loop.models, { selector, driver }, this.clock.now());
    if (!this.connOf(device)) throw new DomainError('bridge.no_device', 'unavailable', `the phone "${device.deviceName}" is not connected`);
    if (path === '/screenshot') this.files.assertAvailable();
    if (path === '/share_media' || path === '/send_mms') await this.files.rewriteAttachments(payload, actor);

    const requestId = randomUUID();
    const cmd = {
      requestId,
      tokenPrefix: device.tokenPrefix,
      method,
      path,
      body: payload,
      params,
      confirmTimeoutSeconds: this.config.bridge.confirmTimeoutSeconds,
      ...(from ? { origin: from.origin } : {}),
      ...(from?.secret ? { secret: from.secret.name } : {}),
    };
    const scrub = secretScrubber(from);
    if (from) await this.agents.confirm(device, { requestId, method, path, body: payload, actor }, from);
    const side = confirmationSide(this.connOf(device)?.supports);
    const phoneAnswerMs = this.config.bridge.commandTimeoutMs + this.config.bridge.confirmTimeoutSeconds * 1000;
    let plan = planOf(
      await this.loop.run(actor, (m, now) =>
        planCommand(m, { ...cmd, confirmBy: side, phoneAnswerSeconds: Math.ceil(phoneAnswerMs / 1000) + 5 }, this.settings, now),
      ),
    );
    // Asked of the phone's own modal: confirmation_requested (by: phone) was written with command_sent, and
    // the phone's answer decides.
    const evidence = this.evidence.wanted(method, path, from);
    const sent = { requestId, method, path, params, body: payload, scrub };
    if (plan.sent && plan.asked) return this.send(device, sent, { timeoutMs: phoneAnswerMs, phoneConfirms: true, evidence });
    if (plan.asked) {
      const shown = from?.secret ? secretLabel(from.secret.name) : confirmationText(path, payload, plan.asked);
      const outcome = await this.askPhone(device, requestId, path, plan.asked, shown);
      if (outcome === 'confirmation_cancelled') throw phoneGone('the phone disconnected before answering the confirmation');
      if (outcome !== 'confirmation_allowed') throw confirmationDenied();
      plan = planOf(await this.loop.run(actor, (m, now) => planCommand(m, { ...cmd, confirmed: true }, this.settings, now)));
    }
    if (plan.refused) throw refusal(plan.refused);
    if (!plan.sent) throw confirmationDenied();
    const reply = await this.send(device, sent, { evidence });
    return path === '/screen' ? { ...reply, body: screenAsAsked({ ...params, ...payload }, reply.body) } : reply;
  }

  /** Asks the phone's user (`bridge.confirm`; no text: asked another way, a hand-over's Thread message); resolves with the decision. */
  askPhone(device: BridgeDevice, requestId: string, path: string, verb: string, text: string | null): Promise<SafetyDecisionKind> {
    return new Promise((resolve) => {
      const conn = this.connOf(device);
      this.inFlightCommands.confirming(requestId, { connId: device.connId, tokenPrefix: device.tokenPrefix, resolve });
      // The phone may already be gone; its close handler cannot see a waiter set after it ran.
      if (!conn || (text !== null && !conn.send('bridge', 'bridge.confirm', { request_id: requestId, verb, path, text }))) {
        this.loop.run(`device:${device.tokenPrefix}`, (m) => cancelConfirmations(m, device.tokenPrefix, [requestId])).catch(() => undefined);
      }
    });
  }

  /**
   * Sends one command and waits for its answer; `evidence`: the screen's hash is asked first (and after the
   * answer, in `answered`); `quiet`: the relay's own hash ask (no event).
   */
  private async send(
    device: EvidencePhone,
    c: OutgoingCommand,
    opts: { timeoutMs?: number; phoneConfirms?: boolean; evidence?: boolean; quiet?: boolean },
  ): Promise<CommandReply> {
    const { requestId, method, path } = c;
    const timeoutMs = opts.timeoutMs ?? this.config.bridge.commandTimeoutMs;
    const screen = this.screens.get(device.tokenPrefix) ?? DEFAULT_SCREEN;
    const wire = toPhoneCommand(path, method as 'GET' | 'POST', c.params, c.body, screen, clientNames(this.config.clientSpelling));
    const before = opts.evidence ? await this.evidence.hash(device) : undefined;
    return new Promise<CommandReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        const p = this.inFlightCommands.command(requestId);
        if (p) void this.fail(p, 'timeout', phoneTimedOut(timeoutMs));
      }, timeoutMs);
      const pending: SentCommand = {
        requestId,
        connId: device.connId,
        tokenPrefix: device.tokenPrefix,
        path,
        method,
        phoneConfirms: opts.phoneConfirms === true,
        ...(c.scrub ? { scrub: c.scrub } : {}),
        started: performance.now(),
        ...(before !== undefined ? { before } : {}),
        ...(opts.quiet ? { quiet: true } : {}),
        timer,
        resolve,
        reject,
      };
      this.inFlightCommands.sent(pending);
      const conn = this.connOf(device);
      if (!conn || !conn.send('bridge', 'bridge.command', { request_id: requestId, ...wire })) {
        void this.fail(pending, 'phone_gone', phoneGone('the phone disconnected before the command could be sent'));
      }
    });
  }

  private settle(p: SentCommand): boolean {
    if (!this.inFlightCommands.settle(p)) return false;
    clearTimeout(p.timer);
    return true;
  }

  private async answered(p: SentCommand, status: number, body: Record<string, unknown>, currentApp?: string): Promise<void> {
    p.answeredAt = performance.now();
    const evidence = p.before === undefined ? null : { before: p.before, after: await this.evidence.hash(p) };
    await this.loop.run(`device:${p.tokenPrefix}`, commandAnswered(p, status, body, evidence, currentApp));
  }

  /** Records the failure, then (once durable) fails the HTTP call. */
  private async fail(p: SentCommand, reason: BridgeFailure, err: DomainError): Promise<void> {
    if (!this.settle(p)) return;
    if (p.quiet) return p.reject(err);
    try {
      await this.loop.run(`device:${p.tokenPrefix}`, commandFailed(p, reason));
    } catch (e) {
      this.logger.warn({ err: (e as Error).message }, 'bridge failure not recorded');
    }
    p.reject(err);
  }

  connOf(device: EvidencePhone): PhoneConnection | undefined {
    return this.hub.byPrefix(device.tokenPrefix).find((c) => c.id === device.connId && !c.closed);
  }

  // ---- operator side ---------------------------------------------------------------------------

  async selectActive(selector: string): Promise<BridgeDevice> {
    const [e] = await this.loop.run('operator', (m, now) => selectActive(m, selector, 'operator', now));
    return this.loop.models.bridge.device(e.data.tokenPrefix)!;
  }

  /** The media entry (token prefix) a screenshot command stored, while this relay run remembers it (bridge-media.ts). */
  shotOf = (requestId: string): string | null => this.files.shotOf(requestId);

  isOnline(device: BridgeDevice): boolean {
    return !!this.connOf(device);
  }
}
