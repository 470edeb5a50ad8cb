import { Module } from '@nestjs/common';
import { BridgeModule } from '../bridge/bridge.module';
import { ThreadsModule } from '../threads/threads.module';
import { McpController } from './mcp.controller';
import { McpSessions } from './mcp-sessions';

/** `/mcp`: an MCP server in front of Device Control (issue 25), through BridgeService's command path. */
@Module({
  imports: [BridgeModule, ThreadsModule],
  controllers: [McpController],
  providers: [McpSessions],
})
export class McpModule {}
