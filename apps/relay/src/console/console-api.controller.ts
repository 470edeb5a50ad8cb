import { Controller, Get, Header, HttpCode, Inject, Post, Query, Req, Res } from '@nestjs/common';
import type { ChainVerifyAnswer, EventsPage, FeaturesAnswer, Overview } from '@svc/console-api';
import { eventLogFilter, isFiltered, type ConsoleEvent, type StoredRelayEvent } from '@svc/events';
import { epoch, DomainError } from '@svc/domain';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Auth } from '../common/auth/auth';
import { Clock } from '../common/loop/clock';
import type { RelayConfig } from '../common/config/relay-config';
import { CommandLoop } from '../common/loop/command-loop';
import { RELAY_CONFIG, RUNTIME, type Runtime } from '../common/auth/tokens';
import { secureLinkStatus } from '../secure-link/secure-link-status';
import { EventsPageQuery } from './console-api.dto';
import { toConsoleEvent } from './console-redaction';
import { ConsoleFeatures } from './console-features';
import { ConsoleState } from './console-state.service';
import { ConsoleStream } from './console-stream.service';
import { withKeyState } from './personal-key-state';
import { ChainVerifyJobs, chainStatusOf } from './store/chain-verify-jobs';

/** The console's own routes: overview, the event log (paged), its live stream and chain checks. */
@Controller('/console/api')
export class ConsoleApiController {
  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    private readonly state: ConsoleState,
    private readonly stream: ConsoleStream,
    private readonly features: ConsoleFeatures,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(RUNTIME) private readonly runtime: Runtime,
    private readonly verifier: ChainVerifyJobs,
  ) {
    features.add({ id: 'overview', title: 'Overview', order: 0 });
    features.add({ id: 'events', title: 'Events', order: 100 });
  }

  @Get('/overview')
  @Auth('operator')
  async overview(): Promise<Overview> {
    const now = this.clock.now();
    const m = this.loop.models;
    const codes = m.pairing.live(now);
    return {
      ok: true,
      server_time: epoch(now),
      version: this.runtime.version,
      started_at: epoch(this.runtime.startedAt),
      uptime_seconds: Math.max(0, epoch(now) - epoch(this.runtime.startedAt)),
      listen: { host: this.config.host, port: this.runtime.port, url: this.runtime.url },
      tls: this.config.tls !== null,
      secure_link: { status: secureLinkStatus(this.runtime, this.config.secureLink.enabled), url: this.runtime.secureLink?.url ?? null },
      phones_online: new Set(m.connections.all().map((c) => c.tokenPrefix)).size,
      sockets_online: m.connections.count(),
      sessions: m.sessions.count(now),
      pending_pairings: codes.filter((c) => c.state === 'pending').length,
      ready_codes: codes.filter((c) => c.state === 'ready').length,
      events_per_second: this.loop.eventsPerSecond(),
      ...(this.loop.storeKind === 'postgres' ? { role: roleOf(this.loop) } : {}),
      log: { last_seq: this.loop.lastSeq, ...(await this.state.logSize()) },
      chain: await this.state.chainStatus(),
      console_streams: this.stream.count(),
      bridge: {
        devices: m.bridge.allDevices().length,
        commands_total: m.bridge.totalCommands,
        stopped_by_safety: [
          'blocked_package',
          'implicit_intent',
          'unconfirmable',
          'confirmation_denied',
          'confirmation_timed_out',
          'master_off',
          'sideload_only',
          'auto_disabled',
        ].reduce((n, k) => n + (m.bridge.decisionCounts()[k] ?? 0), 0),
      },
      media: (() => {
        const live = m.media.live(now);
        return { entries: live.length, bytes: live.reduce((n, e) => n + e.size, 0) };
      })(),
      threads: { queued: m.phoneThreads.queuedCount(), subscribed: m.phoneThreads.subscriber() !== null, enabled: this.config.phoneEnabled },
      rate_limit_blocks: m.rateLimit.activeBlocks(now).length,
      features: this.features.list(),
      recent_events: this.state.newest(10).map((e) => this.view(e)),
    };
  }

  @Get('/features')
  @Auth('operator')
  list(): FeaturesAnswer {
    return { ok: true, features: this.features.list() };
  }

  /** Re-reads the whole chain from seq 1 (the overview's check is incremental): the Store page's job, joined if running, awaited. */
  @Post('/chain/verify')
  @Auth('operator')
  @HttpCode(200)
  async verify(): Promise<ChainVerifyAnswer> {
    const job = await this.verifier.start().done;
    const chain = chainStatusOf(job, this.clock.now().getTime());
    if (!chain) throw new DomainError('store.verify_incomplete', 'unavailable', job.error ?? `the check was ${job.state}`);
    return { ok: true, chain };
  }

  /**
   * `after=SEQ`: oldest first from there (a replay); otherwise newest first, `before=SEQ` to page back.
   * Filters: `type` (comma list, `session.` prefixes), `device`, `since`/`until` (epoch s or ISO).
   */
  @Get('/events')
  @Auth('operator')
  async events(@Query() q: EventsPageQuery): Promise<EventsPage> {
    const { limit = 100, after, before } = q;
    if (after !== undefined && before !== undefined) throw new DomainError('validation.events_cursor', 'invalid', 'give after or before, not both');
    const filter = eventLogFilter({ type: q.type, device: q.device, since: q.since, until: q.until });
    if (filter.device !== undefined && filter.device.length > 64)
      throw new DomainError('validation.device', 'invalid', 'device: at most 64 characters');
    const page = after !== undefined ? await this.state.after(after, limit, filter) : await this.state.before(before, limit, filter);
    const seqs = page.events.map((e) => e.seq);
    return {
      ok: true,
      order: after !== undefined ? 'asc' : 'desc',
      events: page.events.map((e) => this.view(e)),
      more: page.more,
      next: page.more ? (after !== undefined ? { after: Math.max(...seqs) } : { before: Math.min(...seqs) }) : null,
      last_seq: this.loop.lastSeq,
      filtered: isFiltered(filter),
      server_time: epoch(this.clock.now()),
    };
  }

  /**
   * SSE of stored events after `Last-Event-ID` (the browser's reconnect) or `?after=`. Read by hand: a
   * valid header wins over the query, whatever the query holds, so no query DTO may refuse first.
   */
  @Get('/stream')
  @Auth('operator')
  @Header('Cache-Control', 'no-store')
  async streamEvents(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Query('after') afterQ?: string): Promise<void> {
    const header = req.headers['last-event-id'];
    const from =
      intParam(typeof header === 'string' && header !== '' ? header : undefined, 'Last-Event-ID', 0) ?? intParam(afterQ, 'after', 0) ?? null;
    reply.hijack();
    await this.stream.open(reply.raw, from);
  }

  /** An event as the console shows it, personal content said `forgotten` once its key is destroyed. */
  private view(e: StoredRelayEvent): ConsoleEvent {
    const keys = this.loop.sealer?.keys;
    return withKeyState(toConsoleEvent(e), keys ? (id) => keys.get(id) !== undefined : null);
  }
}

function intParam(raw: string | undefined, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d{1,15}$/.test(raw)) throw new DomainError('validation.query', 'invalid', `${name} must be a whole number`);
  const n = Number(raw);
  if (n < min || n > max) throw new DomainError('validation.query', 'invalid', `${name} must be between ${min} and ${max}`);
  return n;
}

/** Leader or standby, for the top bar (a standby's pages are read-only: its writes answer 503 relay.standby). */
function roleOf(loop: CommandLoop): NonNullable<Overview['role']> {
  const r = loop.role();
  return { role: r.role, epoch: r.epoch, lag_records: r.lag?.records ?? null, lag_ms: r.lag?.ms ?? null };
}
