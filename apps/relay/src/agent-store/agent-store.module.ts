import { Module } from '@nestjs/common';
import { AgentSessionStore } from './agent-session-store';

/** The agent host's session stores, read-only: a port the threads and image-activity routes read through. */
@Module({ providers: [AgentSessionStore], exports: [AgentSessionStore] })
export class AgentStoreModule {}
