import { Module } from '@nestjs/common';
import { SecureLinkPreflight } from './secure-link-preflight';
import { SecureLinkController } from './secure-link.controller';

@Module({ controllers: [SecureLinkController], providers: [SecureLinkPreflight] })
export class SecureLinkModule {}
