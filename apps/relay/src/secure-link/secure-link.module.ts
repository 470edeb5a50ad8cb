import { Module } from '@nestjs/common';
import { SecureLinkController } from './secure-link.controller';

@Module({ controllers: [SecureLinkController] })
export class SecureLinkModule {}
