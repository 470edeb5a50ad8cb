import { Module } from '@nestjs/common';
import { ConsoleWitnessesController, TransparencyController } from './transparency.controller';
import { TransparencyService } from './transparency.service';

/** The transparency log: Merkle tree, checkpoints, proofs and witness cosignatures (issue 39). */
@Module({ controllers: [TransparencyController, ConsoleWitnessesController], providers: [TransparencyService], exports: [TransparencyService] })
export class TransparencyModule {}
