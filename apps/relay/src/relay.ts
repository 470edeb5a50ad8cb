import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import * as fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { acquireLogLock, jsonDepthExceeds, JsonTooDeepError, MAX_JSON_DEPTH } from '@svc/events';
import { config as rxjsConfig } from 'rxjs';
import type { DestinationStream, Logger } from 'pino';
import { AppModule } from './app.module';
import { apiVoiceOf, installAuthHook } from './common/auth-hook';
import { Clock, SystemClock } from './common/clock';
import { checkTerminalConfig, loadConfig, relayDir, type RelayConfig } from './common/config';
import { CommandLoop } from './common/command-loop';
import { DiskGuard, installDiskGuardHook, type DiskSpaceSource } from './common/disk-guard';
import { EventBudget } from './common/event-budget';
import { fileStore } from './common/file-store';
import { postgresStore } from './common/postgres-store';
import { ErrorFilter, frameworkErrors } from './common/http-errors';
import { createLogger, NestPinoLogger } from './common/logger';
import { installHealthRoute } from './health/health.route';
import { Scheduler } from './common/scheduler';
import { Secrets } from './common/secrets';
import { writeForwarderKey } from './common/forwarded-peer';
import { clientErrorHandler, guardSlowConnections, serverTimeouts } from './common/slow-clients';
import { RelayValidationPipe } from './common/validation';
import type { Runtime } from './common/tokens';
import { relayVersion } from './common/version';
import { PhoneHub } from './phone-socket/phone-hub.service';
import { RelayWsAdapter } from './phone-socket/relay-ws-adapter';
import { VoiceSessions } from './voice/voice-sessions.service';
import { startReach, startSecureLink } from './secure-link/secure-link.start';
import { MetricsService } from './metrics/metrics.service';
import { installOpenApiRoute } from './openapi/openapi.route';

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
};

export type Relay = {
  app: NestFastifyApplication;
  config: RelayConfig;
  clock: Clock;
  log: CommandLoop;
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
  close(reason?: string): Promise<void>;
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
    return await openRelay(config, options, homeLock.release);
  } catch (err) {
    homeLock.release();
    throw err;
  }
}

async function openRelay(config: RelayConfig, options: RelayOptions, releaseHome: () => void): Promise<Relay> {
  const clock = options.clock ?? new SystemClock();
  const logger = createLogger(config.logLevel, options.logDestination);
  // A bus subscriber that throws must not take the relay down (rxjs would rethrow it on a timer).
  rxjsConfig.onUnhandledError = (err: unknown) =>
    logger.error({ err: err instanceof Error ? err.message : String(err) }, 'event bus subscriber failed');
  const secrets = Secrets.load(relayDir(config));
  // For the dashboard ingress (another process): how it vouches for its callers' addresses (forwarded-peer.ts).
  writeForwarderKey(relayDir(config), secrets);
  const onFatal =
    options.onFatal ??
    ((err: Error) => {
      logger.fatal({ err: err.message }, 'event log failed; stopping so no unrecorded state is served');
      logger.flush?.();
      process.exit(1);
    });
  const log = await CommandLoop.open({
    store: config.eventStoreUrl ? postgresStore(config.eventStoreUrl) : fileStore(relayDir(config), config.segmentBytes),
    secrets,
    clock,
    logger,
    snapshotEvery: config.snapshotEvery,
    onFatal,
  });
  const disk = new DiskGuard({ dir: relayDir(config), ...config.disk, source: options.diskSpace, logger, clock });
  await disk.start();
  const budget = new EventBudget(() => clock.now().getTime());
  log.admission = (events, actor) => {
    disk.admit(events);
    budget.admit(events, actor);
  };
  const version = relayVersion();
  const runtime: Runtime = { port: config.port, startedAt: clock.now(), version, url: '' };
  await log.run('system', () => [
    {
      type: 'relay.started',
      data: {
        version,
        pid: process.pid,
        host: config.host,
        port: config.port,
        tls: config.tls !== null,
        ...(config.allowInsecureApiBearer ? { allowInsecureApiBearer: true } : {}),
        ...(log.recovered ? { recovered: log.recovered } : {}),
        ...(log.staleLock ? { staleLock: log.staleLock } : {}),
      },
    },
  ]);

  const adapter = new FastifyAdapter({
    // No Nest middleware anywhere (auth is a Fastify hook): without middie, no request pays for its hook.
    skipMiddie: true,
    trustProxy: false,
    bodyLimit: config.bodyLimitBytes,
    // Fastify sets this on the server after creating it; never below the headers bound (Node's rule).
    requestTimeout: Math.max(config.requestTimeoutMs, config.headersTimeoutMs),
    connectionTimeout: 120_000,
    clientErrorHandler,
    frameworkErrors,
    ...(config.tls
      ? {
          https: {
            cert: fs.readFileSync(config.tls.cert),
            key: fs.readFileSync(config.tls.key),
            ...serverTimeouts(config.headersTimeoutMs, config.requestTimeoutMs),
          },
        }
      : { http: serverTimeouts(config.headersTimeoutMs, config.requestTimeoutMs) }),
  });
  // Every route as Fastify registers it: what the OpenAPI description is checked against.
  const routes: Array<{ method: string; url: string }> = [];
  adapter.getInstance().addHook('onRoute', (r) => {
    for (const m of Array.isArray(r.method) ? r.method : [r.method]) routes.push({ method: m, url: r.url });
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot({ config, clock, log, secrets, logger, runtime }), adapter, {
    logger: new NestPinoLogger(logger),
    // The relay installs its own JSON parser (installBoundedJsonParser); Nest's would replace it at init.
    bodyParser: false,
  });
  const instance = app.getHttpAdapter().getInstance();
  instance.removeContentTypeParser('text/plain');
  guardSlowConnections(instance.server, { perAddress: config.maxSlowConnectionsPerAddress, tls: Boolean(config.tls), logger });
  installBoundedJsonParser(instance);
  const guard = installAuthHook(instance, {
    log,
    secrets,
    clock,
    logger,
    port: () => runtime.port,
    apiVoice: apiVoiceOf(config),
  });
  installDiskGuardHook(instance, disk);
  installHealthRoute(instance, { log, clock, runtime, secureLinkEnabled: config.secureLink.enabled, clientSpelling: config.clientSpelling, disk });
  installOpenApiRoute(app, instance, version);
  const metrics = app.get(MetricsService);
  // Every answered request, by its route template (never the path: tokens and names stay out of labels).
  instance.addHook('onResponse', (request, reply, done) => {
    metrics.observeHttp(request.method, request.routeOptions?.url, reply.statusCode);
    done();
  });
  const hub = app.get(PhoneHub);
  const voiceOutput = app.get(VoiceSessions);
  app.useWebSocketAdapter(
    new RelayWsAdapter(
      app,
      () => (req) => hub.verifyUpgrade(req),
      undefined,
      () => [voiceOutput.handleUpgrade],
    ),
  );
  app.useGlobalPipes(new RelayValidationPipe());
  app.useGlobalFilters(new ErrorFilter(logger));
  const scheduler = app.get(Scheduler);
  scheduler.intervalMs = config.sweepIntervalMs;

  await app.init();
  // Nest adds a form parser at init; the relay's bodies are JSON (or multipart where a route registers it).
  if (instance.hasContentTypeParser('application/x-www-form-urlencoded')) instance.removeContentTypeParser('application/x-www-form-urlencoded');
  await app.listen({ port: config.port, host: config.host });
  if (guard.unguarded.length > 0) {
    await app.close();
    throw new Error(`routes without @Auth(): ${guard.unguarded.join(', ')}`);
  }
  const address = instance.server.address();
  runtime.port = typeof address === 'object' && address ? address.port : config.port;
  const scheme = config.tls ? 'https' : 'http';
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  runtime.url = `${scheme}://${host}:${runtime.port}`;
  logger.info({ url: runtime.url, version, lastSeq: log.lastSeq }, 'relay listening');
  const secureLink = config.secureLink.enabled ? await startSecureLink({ config, log, logger, relayServer: instance.server }) : null;
  runtime.secureLink = secureLink;
  const reach = startReach({ config, log, logger, secureLink, runtime, backoff: options.reachBackoff });
  runtime.reach = reach;

  let closed = false;
  return {
    app,
    config,
    clock,
    log,
    logger,
    runtime,
    disk,
    routes,
    url: runtime.url,
    port: runtime.port,
    sweep: () => scheduler.sweep(),
    async close(reason = 'shutdown') {
      if (closed) return;
      closed = true;
      runtime.secureLink = null;
      runtime.reach = null;
      reach?.stop();
      await secureLink?.close();
      await app.close();
      await log.run('system', () => [{ type: 'relay.stopping', data: { reason } }]).catch(() => undefined);
      await log.close();
      disk.stop();
      releaseHome();
      logger.info({ reason }, 'relay stopped');
      logger.flush?.();
    },
  };
}

/**
 * Fastify's own JSON parser (prototype-poisoning checks kept), behind a nesting check on the raw text: a
 * body nested past MAX_JSON_DEPTH is a 400 `json_too_deep` before anything walks it recursively.
 */
function installBoundedJsonParser(instance: FastifyInstance): void {
  const parse = instance.getDefaultJsonParser('error', 'error');
  instance.removeContentTypeParser('application/json');
  instance.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = body as string;
    if (jsonDepthExceeds(text)) return done(new JsonTooDeepError(MAX_JSON_DEPTH), undefined);
    void parse(req, text, done);
  });
}
