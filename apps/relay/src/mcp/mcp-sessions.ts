/* eslint-disable @typescript-eslint/no-require-imports */
import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { clientNames, DomainError, type Driver, type Principal } from '@svc/domain';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Server as McpServer } from '@modelcontextprotocol/sdk/server/index.js';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import { BridgeService } from '../bridge/bridge.service';
import { PhoneThreadsService } from '../threads/threads.service';
import { Clock } from '../common/loop/clock';
import { CommandLoop } from '../common/loop/command-loop';
import type { RelayConfig } from '../common/config/relay-config';
import { Scheduler } from '../common/loop/scheduler';
import { LOGGER, RELAY_CONFIG, RUNTIME, type Runtime } from '../common/auth/tokens';
import { channelLost } from '../terminal/channel-lost';
import { mcpServer, type McpDeps } from './mcp-server';
import { McpToolSet } from './mcp-tool-set';

/** One MCP session: its SDK transport and server, the session token it belongs to, and when it was last used. */
export type McpSession = {
  readonly id: string;
  readonly tokenPrefix: string;
  /** The paired device it counts against (its device id, else its token prefix). */
  readonly device: string;
  /** Opened from the relay's host: it may drive any phone (bridge-authority.ts), and answers only there. */
  readonly onHost: boolean;
  readonly transport: StreamableHTTPServerTransport;
  readonly server: McpServer;
  /** Clock ms of the last request's start or end. */
  lastUsed: number;
  /** POST requests being answered (a tool call held by a confirmation, say). */
  busy: number;
};

/**
 * The bounds (RelayConfig `bridge.mcpSessions`): sessions per paired device (its least recently used one gives
 * way to a new one; all busy: refused), in all (then refused), idle life.
 */
export type McpLimits = { perDevice: number; total: number; idleMs: number };

/**
 * The relay's MCP sessions (`/mcp`, Streamable HTTP with session ids). Each belongs to the session token that
 * opened it and answers only to it; it ends when its client deletes it, when it sat idle past the bound (on
 * the relay's clock), when its token gives way to a newer session of its own, and at once when the token is
 * revoked or expires or loses its `bridge` grant. Sessions are transport state, like a socket: not events;
 * the commands they carry are.
 */
@Injectable()
export class McpSessions implements OnModuleInit, OnModuleDestroy {
  /** Tests shrink these. */
  limits: McpLimits;
  private readonly sessions = new Map<string, McpSession>();
  private readonly deps: McpDeps;
  private sub: Subscription | null = null;

  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    private readonly scheduler: Scheduler,
    bridge: BridgeService,
    threads: PhoneThreadsService,
    @Inject(RELAY_CONFIG) config: RelayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(RUNTIME) runtime: Runtime,
  ) {
    this.deps = {
      bridge,
      threads,
      tools: new McpToolSet(clientNames(config.clientSpelling)),
      loop,
      clock,
      logger,
      version: runtime.version,
      screenshotMaxSide: config.bridge.mcpScreenshotMaxSide,
      elements: config.bridge.mcpElements,
    };
    this.limits = { ...config.bridge.mcpSessions };
  }

  onModuleInit(): void {
    this.sub = channelLost(this.loop, this.clock, 'bridge').subscribe(({ tokenPrefix }) =>
      this.closeFor(tokenPrefix, 'the session lost its bridge grant'),
    );
    this.scheduler.onTick(() => this.expireIdle());
  }

  onModuleDestroy(): void {
    this.sub?.unsubscribe();
    // Before the HTTP server closes: an open event stream would hold it.
    for (const s of [...this.sessions.values()]) this.close(s, 'the relay is stopping');
  }

  get size(): number {
    return this.sessions.size;
  }

  /**
   * A new session for the driver's first request (`initialize`); `elicitation`: the client can ask its user.
   * A device past its bound gives way its least recently used session (a client that restarted without
   * DELETE leaves one behind), so a few devices cannot hold the relay's total between them (issue 34).
   */
  async open(driver: Driver & { caller: Principal & { kind: 'device' } }, elicitation: boolean): Promise<McpSession> {
    const caller = driver.caller;
    const device = caller.deviceId || caller.tokenPrefix;
    const mine = [...this.sessions.values()].filter((s) => s.device === device);
    if (mine.length >= this.limits.perDevice) {
      const idle = mine.filter((s) => s.busy === 0).sort((a, b) => a.lastUsed - b.lastUsed)[0];
      if (!idle) throw tooMany(`this device holds ${mine.length} MCP sessions, all busy`);
      this.close(idle, 'a newer session of the same device took its place');
    }
    if (this.sessions.size >= this.limits.total) throw tooMany(`the relay holds its maximum of ${this.limits.total} MCP sessions`);
    const { StreamableHTTPServerTransport } =
      require('@modelcontextprotocol/sdk/server/streamableHttp.js') as typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js');
    const id = randomUUID();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      // Plain JSON answers unless the client can be asked things mid-call (elicitation needs the call's stream).
      enableJsonResponse: !elicitation,
    });
    const server = mcpServer(this.deps, driver);
    const session: McpSession = {
      id,
      tokenPrefix: caller.tokenPrefix,
      device,
      onHost: driver.onHost,
      transport,
      server,
      lastUsed: this.clock.now().getTime(),
      busy: 0,
    };
    transport.onclose = () => {
      if (this.sessions.get(id) === session) this.sessions.delete(id);
    };
    this.sessions.set(id, session);
    await server.connect(transport);
    return session;
  }

  /**
   * The driver's session under this id; another token's is as unknown as a made-up id, and so is one opened
   * from the relay's host when asked from elsewhere (or the other way round): it carries the authority of
   * where it was opened.
   */
  get(id: string, driver: Driver): McpSession | undefined {
    const s = this.sessions.get(id);
    const caller = driver.caller;
    return s && caller.kind === 'device' && s.tokenPrefix === caller.tokenPrefix && s.onHost === driver.onHost ? s : undefined;
  }

  /**
   * Runs one HTTP request of a session, keeping its idle clock. A POST counts as busy while it runs (a held
   * tool call is neither idle nor given way); a GET event stream does not, since a client holds one open for
   * the session's whole life. An initialize that made no session drops it.
   */
  async serve(s: McpSession, holds: boolean, run: () => Promise<void>): Promise<void> {
    if (holds) s.busy++;
    s.lastUsed = this.clock.now().getTime();
    try {
      await run();
    } finally {
      if (holds) s.busy--;
      s.lastUsed = this.clock.now().getTime();
      if (s.transport.sessionId === undefined) this.close(s, 'initialize failed');
    }
  }

  closeFor(tokenPrefix: string, reason: string): void {
    for (const s of [...this.sessions.values()]) if (s.tokenPrefix === tokenPrefix) this.close(s, reason);
  }

  private expireIdle(): void {
    const now = this.clock.now().getTime();
    for (const s of [...this.sessions.values()]) if (s.busy === 0 && now - s.lastUsed >= this.limits.idleMs) this.close(s, 'idle');
  }

  private close(s: McpSession, reason: string): void {
    if (this.sessions.get(s.id) !== s) return;
    this.sessions.delete(s.id);
    this.logger.debug({ tokenPrefix: s.tokenPrefix, reason }, 'MCP session closed');
    s.server.close().catch((err: Error) => this.logger.warn({ err: err.message }, 'MCP session did not close cleanly'));
  }
}

function tooMany(why: string): DomainError {
  return new DomainError(
    'mcp.too_many_sessions',
    'rate_limited',
    `${why}: end one (DELETE /mcp with its Mcp-Session-Id) or wait for idle ones to expire`,
  );
}
