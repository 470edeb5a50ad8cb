import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RelayConfig } from '../common/config/relay-config';
import { Auth } from '../common/auth/auth';
import { RELAY_CONFIG } from '../common/auth/tokens';
import { findConsoleDir, resolveConsoleFile } from './console-static';

/** Serves the built React app at `/console/` (loopback only, like its API). */
@Controller('/console')
export class ConsoleStaticController {
  private found: string | null = null;

  constructor(@Inject(RELAY_CONFIG) private readonly config: RelayConfig) {}

  /** Looked up per request until found, so a build made while the relay runs is picked up. */
  private get root(): string | null {
    return (this.found ??= findConsoleDir(this.config.consoleDir));
  }

  @Get()
  @Auth('console-app')
  redirect(@Res() reply: FastifyReply) {
    return reply.status(308).header('location', '/console/').send();
  }

  @Get('/*')
  @Auth('console-app')
  serve(@Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    const rel = new URL(req.url, 'http://console').pathname.replace(/^\/console\/?/, '');
    if (rel === 'api' || rel.startsWith('api/')) {
      return reply.status(404).header('cache-control', 'no-store').send({ ok: false, error: 'no such console API route', code: 'not_found' });
    }
    if (!this.root) {
      return reply
        .status(503)
        .header('cache-control', 'no-store')
        .type('text/plain; charset=utf-8')
        .send('The console is not built. Run `npm run build:console` (or set RELAY_CONSOLE_DIR) and reload.\n');
    }
    const file = resolveConsoleFile(this.root, rel);
    if (!file) return reply.status(404).header('cache-control', 'no-store').send({ ok: false, error: 'no such console file', code: 'not_found' });
    return reply.status(200).header('cache-control', file.cache).type(file.type).send(file.body);
  }
}
