import { Module } from '@nestjs/common';
import { SecureLinkPreflight } from './secure-link-preflight';
import { SecureLinkController } from './secure-link.controller';

// The console's Connectivity page runs the same preflight.
@Module({ controllers: [SecureLinkController], providers: [SecureLinkPreflight], exports: [SecureLinkPreflight] })
export class SecureLinkModule {}
