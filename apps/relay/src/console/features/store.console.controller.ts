import { Body, Controller, Get, HttpCode, Inject, Post } from '@nestjs/common';
import type { CheckpointKeyView, CheckpointMade, RelaysView, StoreView, VerifyStartAnswer, VerifyStatusAnswer } from '@svc/console-api';
import { epoch } from '@svc/domain';
import * as path from 'node:path';
import { Auth } from '../../common/auth/auth';
import { Clock } from '../../common/loop/clock';
import { CommandLoop } from '../../common/loop/command-loop';
import { relayDir } from '../../common/config/config';
import { type RelayConfig } from '../../common/config/relay-config';
import { RELAY_CONFIG, RUNTIME, type Runtime } from '../../common/auth/tokens';
import { ConsoleFeatures } from '../console-features';
import { ConsoleState } from '../console-state.service';
import { ChainVerifyJobs } from '../store/chain-verify-jobs';
import { TransparencyService } from '../../transparency/transparency.service';
import { CheckpointSigner } from '../store/checkpoint-signer';
import { StoreCheckpointDto, StoreVerifyDto } from '../store/store.dto';
import { relaysView } from '../store/relays-view';
import { fileSnapshots, pgSnapshots, segmentsOf, storeCommands } from '../store/store-facts';
import { runnableSvc } from '../../cli/self-command';

/**
 * Store page: where the log lives (a directory, or PostgreSQL with the URL's password removed), its size,
 * last seq and segments, the projection snapshots, the shell commands that export and verify it, and the
 * full chain check from seq 1 as a background job (one at a time; progress by polling its status), and
 * signed checkpoints of the durable head (the public key to copy; a checkpoint to download).
 */
@Controller('/console/api/store')
export class StoreConsoleController {
  private readonly signer: CheckpointSigner;

  constructor(
    features: ConsoleFeatures,
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    private readonly state: ConsoleState,
    private readonly verifier: ChainVerifyJobs,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    log: TransparencyService,
    @Inject(RUNTIME) private readonly runtime: Runtime,
  ) {
    features.add({ id: 'store', title: 'Store', order: 90 });
    this.signer = new CheckpointSigner(log, loop, clock);
  }

  @Get()
  @Auth('operator')
  async view(): Promise<StoreView> {
    const where = this.state.logSource();
    const size = await this.state.logSize();
    const dir = where.kind === 'file' ? where.dir : path.join(relayDir(this.config), 'events');
    return {
      ok: true,
      server_time: epoch(this.clock.now().getTime()),
      store: this.loop.storeKind,
      location: this.loop.location,
      bytes: size.bytes,
      segment_count: size.segments,
      segments: where.kind === 'file' ? segmentsOf(where.dir) : [],
      last_seq: this.loop.lastSeq,
      last_hash: this.loop.lastHash,
      chain: await this.state.chainStatus(),
      snapshots: where.kind === 'file' ? fileSnapshots(path.join(relayDir(this.config), 'snapshots')) : await pgSnapshots(where.source),
      snapshot_every: this.config.snapshotEvery,
      verify: this.verifier.status(),
      cli: runnableSvc(process.env, this.config.svcHome),
      commands: storeCommands(this.loop.storeKind, dir, runnableSvc(process.env, this.config.svcHome)),
    };
  }

  @Get('/verify')
  @Auth('operator')
  verifyStatus(): VerifyStatusAnswer {
    return { ok: true, server_time: epoch(this.clock.now().getTime()), job: this.verifier.status() };
  }

  /** Starts the full check, or joins the one running (`joined: true`); answers at once, the page polls its status. */
  @Post('/verify')
  @Auth('operator')
  @HttpCode(202)
  startVerify(@Body() _body: StoreVerifyDto): VerifyStartAnswer {
    const { joined, job } = this.verifier.start();
    return { ok: true, joined, job };
  }

  /** Both relays of a hot-standby pair (PostgreSQL), their roles, epochs, lag and when last seen. */
  @Get('/relays')
  @Auth('operator')
  relays(): Promise<RelaysView> {
    return relaysView(this.loop, this.config, this.clock.now().getTime(), this.runtime.url);
  }

  @Get('/checkpoint')
  @Auth('operator')
  checkpointKey(): CheckpointKeyView {
    return this.signer.view();
  }

  /** Signs the durable head now; the act is an event, durable before the answer. */
  @Post('/checkpoint')
  @Auth('operator')
  @HttpCode(200)
  checkpoint(@Body() _body: StoreCheckpointDto): Promise<CheckpointMade> {
    return this.signer.sign();
  }
}
