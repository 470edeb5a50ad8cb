import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import * as fs from 'node:fs';
import { acquireLogLock, holderName, isLeadershipLoss, type HeldLock } from '@svc/events';
import { config as rxjsConfig } from 'rxjs';
import type { DestinationStream, Logger } from 'pino';
import { AppModule } from './app.module';
import { apiVoiceOf, installAuthHook } from './common/http/auth-hook';
import { Clock, SystemClock } from './common/loop/clock';
import { checkTerminalConfig, loadConfig, relayDir } from './common/config/config';
import { type RelayConfig } from './common/config/relay-config';
import { openKeyStore } from './personal/open-key-store';
import { PersonalSealer } from './personal/personal-sealer';
import { CommandLoop } from './common/loop/command-loop';
import { DiskGuard, installDiskGuardHook, type DiskSpaceSource } from './common/loop/disk-guard';
import { DEFAULT_EVENT_BUDGET, DEVICE_CONTROL_BUDGET, EventBudget } from './common/loop/event-budget';
import { fileStore } from './common/loop/file-store';
import { memberOf, postgresStore } from './common/loop/postgres-store';
import { ErrorFilter } from './common/http/http-errors';
import { dropFormParser, hardenHttpServer, listeningUrl, relayHttpAdapter } from './common/http/http-server';
import { createLogger, NestPinoLogger } from './common/logger';
import { installHealthRoute } from './health/health.route';
import { Scheduler } from './common/loop/scheduler';
import { Secrets } from './common/auth/secrets';
import { writeForwarderKey } from './common/http/forwarded-peer';
import { OperatorKey } from './common/auth/operator-key';
import { RelayValidationPipe } from './common/http/validation';
import type { Runtime } from './common/auth/tokens';
import { relayVersion } from './common/config/version';
import { PhoneHub } from './phone-socket/phone-hub.service';
import { RelayWsAdapter } from './phone-socket/relay-ws-adapter';
import { VoiceSessions } from './voice/voice-sessions.service';
import { startReach, startSecureLink } from './secure-link/secure-link.start';
import { MetricsService } from './metrics/metrics.service';
import { ConsoleSignIn } from './console/console-sign-in.service';
import { installOpenApiRoute } from './openapi/openapi.route';
import { SHUTDOWN_DRAIN_MS } from './common/shutdown';
import { RoleController } from './standby/role-controller';
import { publishSharedSecrets, pullSharedSecrets, requireKek } from './standby/shared-secrets';
import { installStandbyHook, standbyUpgradeRoute } from './standby/standby-gate';

export type RelayOptions = {
  config?: RelayConfig;
  clock?: Clock;
  /** Where log lines go (tests capture them to prove no secret is ever logged). */
  logDestination?: DestinationStream;
  /** The log can no longer be written; default: log and exit(1), since state ran ahead of the disk. */
  onFatal?: (err: Error) => void;
  /** The Reach connector's reconnect delays (tests shrink them; default 1 s doubling to 60 s). */
  reachBackoff?: { baseMs: number; maxMs: number };
  /** Where the disk guard reads free space (default: statfs of the relay home; tests simulate a full disk). */
  diskSpace?: DiskSpaceSource;
  /** false: personal content is written in plain text (only for the benchmark that measures what sealing costs). */
  sealPersonal?: boolean;
};

export type Relay = {
  app: NestFastifyApplication;
  config: RelayConfig;
  clock: Clock;
  loop: CommandLoop;
  logger: Logger;
  runtime: Runtime;
  /** Free space of the relay home's filesystem; new work is refused while it is low. */
  disk: DiskGuard;
  /** Every HTTP route Fastify registered (method, URL template). */
  routes: ReadonlyArray<{ method: string; url: string }>;
  /** `http://127.0.0.1:<port>` (or https), for tests and the CLI. */
  url: string;
  port: number;
  /** Runs every time-driven sweep now and waits for its events. */
  sweep(): Promise<void>;
  /** A one-time console sign-in link for a browser on this machine (what the start-up banner prints). */
  consoleLink(): Promise<{ url: string; expiresAt: Date }>;
  close(reason?: string): Promise<void>;
};

/** What start-up has made so far, handed from one step to the next. */
type Core = {
  config: RelayConfig;
  clock: Clock;
  logger: Logger;
  secrets: Secrets;
  operatorKey: OperatorKey;
  loop: CommandLoop;
  disk: DiskGuard;
  runtime: Runtime;
};

/** Opens the log (replaying it), builds the Nest app on Fastify with the phone socket, and listens. */
export async function createRelay(options: RelayOptions = {}): Promise<Relay> {
  const config: RelayConfig = checkTerminalConfig(options.config ?? loadConfig(process.env));
  // One writer per home, whatever holds the event log: the home also holds owned uploads, secrets, the
  // identity and recordings, which a second relay would clean up or rewrite under the first one's feet.
  // Taken before anything under the home is read or written; a second relay exits naming the holder.
  fs.mkdirSync(relayDir(config), { recursive: true, mode: 0o700 });
  const homeLock = acquireLogLock(relayDir(config), 'relay home');
  try {
    return await openRelay(config, options, homeLock);
  } catch (err) {
    homeLock.release();
    throw err;
  }
}

/** The start-up sequence, under the home lock. */
async function openRelay(config: RelayConfig, options: RelayOptions, homeLock: HeldLock): Promise<Relay> {
  const clock = options.clock ?? new SystemClock();
  const logger = createLogger(config.logLevel, options.logDestination);
  // A bus subscriber that throws must not take the relay down (rxjs would rethrow it on a timer).
  rxjsConfig.onUnhandledError = (err: unknown) =>
    logger.error({ err: err instanceof Error ? err.message : String(err) }, 'event bus subscriber failed');
  // Two relays on one database share their keys through it (standby/shared-secrets.ts): a standby takes
  // the database's copies before it loads them; a leader publishes its own once they exist.
  if (config.standby.enabled) await pullSharedSecrets(config.eventStoreUrl!, relayDir(config), requireKek(relayDir(config)));
  const secrets = Secrets.load(relayDir(config));
  // For the dashboard ingress (another process): how it vouches for its callers' addresses (forwarded-peer.ts).
  writeForwarderKey(relayDir(config), secrets);
  // The operator's credential (made at first start): what the console and every operator action need.
  const operatorKey = OperatorKey.load(relayDir(config));
  const fatal = options.onFatal ?? exitOnFatal(logger);
  // On PostgreSQL a leader that lost the log (another relay took over) steps down to standby, not out.
  let roles: RoleController | null = null;
  const onFatal = (err: Error) => (roles && isLeadershipLoss(err) ? void roles.stepDown(err) : fatal(err));
  // The URL this relay serves on, for its svc_relay_members row (known once it listens).
  const served = { url: '' };
  const loop = await openLog(config, clock, logger, secrets, onFatal, options.sealPersonal !== false, () => served.url || null);
  const disk = await guardAdmission(loop, config, clock, logger, options.diskSpace);
  const version = relayVersion();
  const runtime: Runtime = { port: config.port, startedAt: clock.now(), version, url: '' };
  const startedAsStandby = loop.standby;
  // Published under the writer's lock: a relay refused the log must not replace the leader's copies.
  if (config.eventStoreUrl && !startedAsStandby) await publishShared(config.eventStoreUrl, relayDir(config), logger);
  if (!startedAsStandby) await recordStart(loop, config, version);
  const core: Core = { config, clock, logger, secrets, operatorKey, loop, disk, runtime };

  const { app, routes } = await buildApp(core);
  const instance = app.getHttpAdapter().getInstance();
  try {
    await app.init();
    dropFormParser(instance);
    // Every route is registered once the app is ready (plugins' too): the auth hook refuses one without @Auth()
    // here, before anything listens.
    await instance.ready();
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    await app.close().catch(() => undefined);
    await loop.close().catch(() => undefined);
    await loop.sealer?.keys.close().catch(() => undefined);
    disk.stop();
    throw err;
  }
  const address = instance.server.address();
  runtime.port = typeof address === 'object' && address ? address.port : config.port;
  runtime.url = listeningUrl(config, runtime.port);
  served.url = runtime.url;
  logger.info({ url: runtime.url, version, lastSeq: loop.lastSeq }, 'relay listening');
  // The CLI finds this relay by its home (any port): the lock it already holds says where it answers.
  homeLock.annotate({ url: runtime.url, ...(config.tls ? { certFile: config.tls.cert } : {}) });

  // Secure Link and Reach speak for the relay that leads (a standby starts them when it takes over).
  let secureLink: Awaited<ReturnType<typeof startSecureLink>> | null = null;
  let reach: ReturnType<typeof startReach> = null;
  const startLeaderParts = async () => {
    secureLink = config.secureLink.enabled ? await startSecureLink({ config, loop, logger, relayServer: instance.server }) : null;
    runtime.secureLink = secureLink;
    reach = startReach({ config, loop, logger, secureLink, runtime, backoff: options.reachBackoff });
    runtime.reach = reach;
  };
  const stopLeaderParts = async () => {
    runtime.secureLink = null;
    runtime.reach = null;
    reach?.stop();
    reach = null;
    await secureLink?.close();
    secureLink = null;
  };
  if (!startedAsStandby) await startLeaderParts();
  if (loop.storeKind === 'postgres') {
    roles = new RoleController(loop, logger, {
      record: (term) => recordTakeover(loop, config, version, term),
      onLead: startLeaderParts,
      onStandby: async () => {
        app.get(PhoneHub).closeAll('relay.standby: another relay leads now');
        await stopLeaderParts();
      },
      onFatal: fatal,
    });
    if (startedAsStandby) await roles.startStandby();
    else await loop.armLease();
  }

  const scheduler = app.get(Scheduler);
  let closed = false;
  return {
    app,
    config,
    clock,
    loop,
    logger,
    runtime,
    disk,
    routes,
    url: runtime.url,
    port: runtime.port,
    sweep: () => scheduler.sweep(),
    consoleLink: () => app.get(ConsoleSignIn).issueLink(),
    async close(reason = 'shutdown') {
      if (closed) return;
      closed = true;
      await roles?.stop();
      await stopLeaderParts();
      await closeHttp(instance.server, () => app.close());
      await loop.record('system', [{ type: 'relay.stopping', data: { reason } }]).catch(() => undefined);
      await loop.close();
      await loop.sealer?.keys.close();
      disk.stop();
      homeLock.release();
      logger.info({ reason }, 'relay stopped');
      logger.flush?.();
    },
  };
}

function exitOnFatal(logger: Logger): (err: Error) => void {
  return (err) => {
    logger.fatal({ err: err.message }, 'event log failed; stopping so no unrecorded state is served');
    logger.flush?.();
    process.exit(1);
  };
}

/** The event log (a file log under the home, or PostgreSQL), replayed into the read models. */
async function openLog(
  config: RelayConfig,
  clock: Clock,
  logger: Logger,
  secrets: Secrets,
  onFatal: (err: Error) => void,
  seal: boolean,
  url: () => string | null,
): Promise<CommandLoop> {
  return CommandLoop.open({
    sealer: seal ? new PersonalSealer(await openKeyStore(config, { upgrade: !config.standby.enabled }), config.personalDataKeysPerHour) : undefined,
    store: config.eventStoreUrl
      ? postgresStore(config.eventStoreUrl, config.standby, memberOf(config, clock, url))
      : fileStore(relayDir(config), config.segmentBytes),
    secrets,
    clock,
    logger,
    snapshotEvery: config.snapshotEvery,
    onFatal,
  });
}

export { SHUTDOWN_DRAIN_MS };

/**
 * Closes the app and its HTTP server without waiting on sockets that carry nothing: keep-alive sockets
 * between requests and sockets a browser opened ahead of time (chromium keeps one spare) would otherwise
 * hold the close for the 120 s connection timeout. Requests in flight get SHUTDOWN_DRAIN_MS, then every
 * remaining socket is cut.
 */
async function closeHttp(server: { closeIdleConnections?: () => void; closeAllConnections?: () => void }, close: () => Promise<void>): Promise<void> {
  const cut = setTimeout(() => server.closeAllConnections?.(), SHUTDOWN_DRAIN_MS);
  cut.unref();
  const idle = setInterval(() => server.closeIdleConnections?.(), 100);
  idle.unref();
  try {
    await close();
  } finally {
    clearTimeout(cut);
    clearInterval(idle);
  }
}

/** What may refuse a decision's events before they are appended: the disk guard, then each device's event budget. */
async function guardAdmission(loop: CommandLoop, config: RelayConfig, clock: Clock, logger: Logger, diskSpace?: DiskSpaceSource): Promise<DiskGuard> {
  const disk = new DiskGuard({ dir: relayDir(config), ...config.disk, source: diskSpace, logger, clock });
  await disk.start();
  const budget = new EventBudget(() => clock.now().getTime(), DEFAULT_EVENT_BUDGET, DEVICE_CONTROL_BUDGET, config.reconnects);
  loop.admission = (events, actor) => {
    disk.admit(events);
    budget.admit(events, actor);
  };
  return disk;
}

/** `relay.started` opens each run: projections of ephemeral state reset at it. */
async function recordStart(loop: CommandLoop, config: RelayConfig, version: string): Promise<void> {
  await loop.record('system', [
    {
      type: 'relay.started',
      data: {
        version,
        pid: process.pid,
        host: config.host,
        port: config.port,
        tls: config.tls !== null,
        ...(config.allowInsecureApiBearer ? { allowInsecureApiBearer: true } : {}),
        ...(loop.recovered ? { recovered: loop.recovered } : {}),
        ...(loop.staleLock ? { staleLock: loop.staleLock } : {}),
      },
    },
  ]);
}

/** The leader's keys into the database; a home whose KEK does not open the database's copies replaces them (the leader is the truth). */
async function publishShared(url: string, dir: string, logger: Logger): Promise<void> {
  const r = await publishSharedSecrets(url, dir);
  if (r.replaced)
    logger.warn(
      { published: r.published },
      "this home's key-encryption key did not open the database's shared secrets: replaced them with this home's (a standby prepared from another home must run svc relay standby init again)",
    );
}

/** A standby that took over opens its term as a restart does (`relay.started`: ephemeral state resets), and says so. */
async function recordTakeover(loop: CommandLoop, config: RelayConfig, version: string, term: { epoch: number; previous: number }): Promise<void> {
  await loop.record('system', [
    { type: 'relay.started', data: { version, pid: process.pid, host: config.host, port: config.port, tls: config.tls !== null } },
    {
      type: 'relay.leader_changed',
      data: { epoch: term.epoch, previousEpoch: term.previous, holder: holderName(), version },
    },
  ]);
}

/**
 * The Nest app on the hardened Fastify, with what sits in front of the routes (auth, the disk guard),
 * the routes Nest does not own (health, OpenAPI), metrics, the phone socket, validation and errors.
 */
async function buildApp(core: Core): Promise<{ app: NestFastifyApplication; routes: Array<{ method: string; url: string }> }> {
  const { config, clock, loop, secrets, operatorKey, logger, runtime, disk } = core;
  const { adapter, routes } = relayHttpAdapter(config);
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot({ config, clock, loop, secrets, operatorKey, logger, runtime, disk }),
    adapter,
    {
      logger: new NestPinoLogger(logger),
      // The relay installs its own JSON parser (hardenHttpServer); Nest's would replace it at init.
      bodyParser: false,
    },
  );
  const instance = app.getHttpAdapter().getInstance();
  hardenHttpServer(instance, config, logger);
  installStandbyHook(instance, () => loop.standby);
  installAuthHook(instance, {
    loop,
    secrets,
    clock,
    logger,
    port: () => runtime.port,
    operatorKey,
    loopbackTrust: config.loopbackTrust,
    apiVoice: apiVoiceOf(config),
  });
  installDiskGuardHook(instance, disk);
  installHealthRoute(instance, {
    loop,
    clock,
    runtime,
    secureLinkEnabled: config.secureLink.enabled,
    clientSpelling: config.clientSpelling,
    disk,
    terminalRecording: config.terminalRecording.enabled,
    operatorKey,
  });
  installOpenApiRoute(app, instance, runtime.version);
  const metrics = app.get(MetricsService);
  // Every answered request, by its route template (never the path: tokens and names stay out of labels).
  instance.addHook('onResponse', (request, reply, done) => {
    metrics.observeHttp(request.method, request.routeOptions?.url, reply.statusCode);
    done();
  });
  const hub = app.get(PhoneHub);
  const voiceOutput = app.get(VoiceSessions);
  const standbyRoute = standbyUpgradeRoute(() => loop.standby);
  app.useWebSocketAdapter(
    new RelayWsAdapter(
      app,
      () => (req) => hub.verifyUpgrade(req),
      undefined,
      () => [standbyRoute, voiceOutput.handleUpgrade],
    ),
  );
  app.useGlobalPipes(new RelayValidationPipe());
  app.useGlobalFilters(new ErrorFilter(logger));
  app.get(Scheduler).intervalMs = config.sweepIntervalMs;
  return { app, routes };
}
