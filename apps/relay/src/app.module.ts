import { DynamicModule, Module, type Provider } from '@nestjs/common';
import type { Logger } from 'pino';
import { Clock } from './common/loop/clock';
import { ConsoleModule } from './console/console.module';
import type { RelayConfig } from './common/config/relay-config';
import { CommandLoop } from './common/loop/command-loop';
import { DiskGuard } from './common/loop/disk-guard';
import { Scheduler } from './common/loop/scheduler';
import { Secrets } from './common/auth/secrets';
import { OperatorKey } from './common/auth/operator-key';
import { LOGGER, RELAY_CONFIG, RUNTIME, type Runtime } from './common/auth/tokens';
import { BridgeModule } from './bridge/bridge.module';
import { MediaModule } from './media/media.module';
import { PairingModule } from './pairing/pairing.module';
import { PhoneSocketModule } from './phone-socket/phone-socket.module';
import { SessionsModule } from './sessions/sessions.module';
import { ClipboardModule } from './clipboard/clipboard.module';
import { ContextModule } from './context/context.module';
import { ImageActivityModule } from './image-activity/image-activity.module';
import { NotificationsModule } from './notifications/notifications.module';
import { ThreadsModule } from './threads/threads.module';
import { TerminalModule } from './terminal/terminal.module';
import { TuiModule } from './tui/tui.module';
import { VoiceModule } from './voice/voice.module';
import { OperatorModule } from './operator/operator.module';
import { ProfilesModule } from './profiles/profiles.module';
import { DesktopModule } from './desktop/desktop.module';
import { SecureLinkModule } from './secure-link/secure-link.module';
import { ReachModule } from './reach/reach.module';
import { MetricsModule } from './metrics/metrics.module';
import { McpModule } from './mcp/mcp.module';
import { SecretsModule } from './secrets/secrets.module';
import { PersonalDataModule } from './personal/personal-data.module';
import { LogRetentionModule } from './log-retention/log-retention.module';
import { TransparencyModule } from './transparency/transparency.module';

export type CoreValues = {
  config: RelayConfig;
  clock: Clock;
  loop: CommandLoop;
  secrets: Secrets;
  operatorKey: OperatorKey;
  logger: Logger;
  runtime: Runtime;
  /** What stops a writer the disk guard does not see (a live terminal recording) when the disk is low. */
  disk: DiskGuard;
};

/** Values made before Nest starts (the log is opened and replayed first), shared by every module. */
@Module({})
export class CoreModule {
  static forRoot(v: CoreValues): DynamicModule {
    const providers: Provider[] = [
      { provide: RELAY_CONFIG, useValue: v.config },
      { provide: Clock, useValue: v.clock },
      { provide: CommandLoop, useValue: v.loop },
      { provide: Secrets, useValue: v.secrets },
      { provide: OperatorKey, useValue: v.operatorKey },
      { provide: LOGGER, useValue: v.logger },
      { provide: RUNTIME, useValue: v.runtime },
      { provide: DiskGuard, useValue: v.disk },
      Scheduler,
    ];
    return {
      module: CoreModule,
      global: true,
      providers,
      exports: providers.map((p) => (typeof p === 'function' ? p : (p as { provide: unknown }).provide)) as never,
    };
  }
}

@Module({
  imports: [
    PairingModule,
    SessionsModule,
    PhoneSocketModule,
    ThreadsModule,
    NotificationsModule,
    ClipboardModule,
    ImageActivityModule,
    ContextModule,
    TerminalModule,
    TuiModule,
    BridgeModule,
    MediaModule,
    VoiceModule,
    OperatorModule,
    ProfilesModule,
    DesktopModule,
    SecureLinkModule,
    ReachModule,
    MetricsModule,
    McpModule,
    PersonalDataModule,
    SecretsModule,
    LogRetentionModule,
    TransparencyModule,
    ConsoleModule,
  ],
})
export class AppModule {
  static forRoot(v: CoreValues): DynamicModule {
    return { module: AppModule, imports: [CoreModule.forRoot(v)] };
  }
}
