import { Module } from '@nestjs/common';
import { PairingController } from './pairing.controller';
import { PairingService } from './pairing.service';

/** Pairing codes: register, mint, the public pending requests and their approval (spec 4.1). */
@Module({ controllers: [PairingController], providers: [PairingService], exports: [PairingService] })
export class PairingModule {}
