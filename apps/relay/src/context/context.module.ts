import { Module } from '@nestjs/common';
import { ContextController } from './context.controller';
import { ContextService } from './context.service';

/** `/context/injected`: what the relay adds to the agent's context, for audit. */
@Module({ controllers: [ContextController], providers: [ContextService] })
export class ContextModule {}
