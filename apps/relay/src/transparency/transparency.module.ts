import { Module } from '@nestjs/common';
import { ConsoleWitnessesController, TransparencyController } from './transparency.controller';
import { TransparencyService } from './transparency.service';
import { WitnessPushService } from './witness-push.service';

/** The transparency log: Merkle tree, checkpoints, proofs and witness cosignatures (issue 39). */
@Module({
  controllers: [TransparencyController, ConsoleWitnessesController],
  providers: [TransparencyService, WitnessPushService],
  exports: [TransparencyService, WitnessPushService],
})
export class TransparencyModule {}
