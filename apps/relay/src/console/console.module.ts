import { Inject, Module, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { RelayConfig } from '../common/config/relay-config';
import { refusesAsNotJson } from '../common/http/json-only';
import { LOGGER, RELAY_CONFIG } from '../common/auth/tokens';
import { BridgeModule } from '../bridge/bridge.module';
import { DesktopModule } from '../desktop/desktop.module';
import { PairingModule } from '../pairing/pairing.module';
import { SecureLinkModule } from '../secure-link/secure-link.module';
import { SessionsModule } from '../sessions/sessions.module';
import { TerminalModule } from '../terminal/terminal.module';
import { VoiceModule } from '../voice/voice.module';
import { PersonalDataModule } from '../personal/personal-data.module';
import { ConsoleApiController } from './console-api.controller';
import { ConsoleFeatures } from './console-features';
import { ConsoleState } from './console-state.service';
import { CONSOLE_HEADERS } from './console-static';
import { consoleWhere, isConsoleUrl } from './console-url';
import { installLoopbackRefusalPage } from './loopback-refusal-page';
import { ConsoleRootController } from './console-root.controller';
import { ConsoleStaticController } from './console-static.controller';
import { ConsoleSignInController } from './console-sign-in.controller';
import { ConsoleSignIn } from './console-sign-in.service';
import { ConsoleStream } from './console-stream.service';
import { BridgeConsoleController } from './features/bridge.console.controller';
import { McpTrailsConsoleController } from './features/mcp-trails.console.controller';
import { ConnectivityConsoleController } from './features/connectivity.console.controller';
import { DesktopConsoleController } from './features/desktop.console.controller';
import { MediaConsoleController } from './features/media.console.controller';
import { MetricsConsoleController } from './features/metrics.console.controller';
import { PairingConsoleController } from './features/pairing.console.controller';
import { PersonalDataConsoleController } from './features/personal-data.console.controller';
import { RateLimitConsoleController } from './features/rate-limit.console.controller';
import { ProfilesConsoleController } from './features/profiles.console.controller';
import { SessionsConsoleController } from './features/sessions.console.controller';
import { StoreConsoleController } from './features/store.console.controller';
import { TerminalConsoleController } from './features/terminal.console.controller';
import { ThreadsConsoleController } from './features/threads.console.controller';
import { VoiceConsoleController } from './features/voice.console.controller';
import { TransparencyModule } from '../transparency/transparency.module';
import { ChainVerifyJobs } from './store/chain-verify-jobs';

/**
 * The operator console: the built app at `/console/`, its read models at `/console/api/<feature>`,
 * commands under the same prefix, and the live event stream. A feature page adds one controller here
 * (see features/) that registers itself with ConsoleFeatures.
 */
@Module({
  // The feature pages' commands go through the very services of the phone and operator routes.
  imports: [
    SessionsModule,
    PairingModule,
    BridgeModule,
    TerminalModule,
    DesktopModule,
    SecureLinkModule,
    VoiceModule,
    PersonalDataModule,
    TransparencyModule,
  ],
  controllers: [
    ConsoleRootController,
    ConsoleApiController,
    ConsoleSignInController,
    SessionsConsoleController,
    PersonalDataConsoleController,
    PairingConsoleController,
    RateLimitConsoleController,
    BridgeConsoleController,
    McpTrailsConsoleController,
    MediaConsoleController,
    ThreadsConsoleController,
    TerminalConsoleController,
    VoiceConsoleController,
    ProfilesConsoleController,
    DesktopConsoleController,
    ConnectivityConsoleController,
    MetricsConsoleController,
    StoreConsoleController,
    ConsoleStaticController,
  ],
  providers: [ConsoleFeatures, ConsoleState, ConsoleStream, ChainVerifyJobs, ConsoleSignIn],
  exports: [ConsoleSignIn],
})
export class ConsoleModule implements OnModuleInit, OnApplicationBootstrap {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    installLoopbackRefusalPage(fastify);
    // Runs after the auth hook (installed before init), so a foreign caller gets 403 first. Callback
    // style: every other request (/health, Device Control) passes with one string test and no promise.
    fastify.addHook('onRequest', (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
      if (!isConsoleUrl(req.url)) return done();
      for (const [k, v] of Object.entries(CONSOLE_HEADERS)) void reply.header(k, v);
      if (req.url.startsWith('/console/api/')) void reply.header('cache-control', 'no-store');
      // CSRF (json-only.ts): commands are JSON; a command without a body needs the type too.
      if (!req.url.startsWith('/console/api/') || !refusesAsNotJson(req.method, req.headers, 'refused')) return done();
      void reply
        .status(415)
        .header('cache-control', 'no-store')
        .send({ ok: false, error: 'console commands take a JSON body (Content-Type: application/json)', code: 'unsupported_media_type' });
    });
  }

  onApplicationBootstrap(): void {
    const server = this.adapterHost.httpAdapter.getHttpServer() as import('node:http').Server;
    server.once('listening', () => {
      const where = consoleWhere(this.config, (server.address() as AddressInfo).port);
      if (where.state === 'unreachable') {
        this.logger.warn(
          { host: this.config.host },
          'console unreachable: it answers only on loopback, and the relay listens on a non-loopback address',
        );
      } else if (where.state === 'not_built') {
        this.logger.warn(`console not built (run npm run build:console); it will be at ${where.url}`);
      } else {
        this.logger.info({ url: where.url }, `console at ${where.url}`);
      }
    });
  }
}
