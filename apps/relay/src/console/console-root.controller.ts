import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RelayConfig } from '../common/config/relay-config';
import { Auth } from '../common/auth/auth';
import { RELAY_CONFIG, RUNTIME, type Runtime } from '../common/auth/tokens';
import { checkLoopback } from '../common/http/net';
import { consoleWhere } from './console-url';

/**
 * `GET /`: nothing lives here (the phone socket's upgrade shares the path), so it stays the edge's 404,
 * but someone on this machine who opened the relay's address in a browser is pointed at the console. The
 * link is a pointer, not authority (the console still signs in); other peers get the plain 404, as on
 * any unknown route, so the relay says nothing of its console to the network.
 */
@Controller()
export class ConsoleRootController {
  constructor(
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(RUNTIME) private readonly runtime: Runtime,
  ) {}

  @Get('/')
  @Auth('public')
  root(@Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    void reply.status(404).header('cache-control', 'no-store');
    const where = consoleWhere(this.config, this.runtime.port);
    if (!checkLoopback(req.raw, this.runtime.port).ok || where.state === 'unreachable')
      return reply.send({ ok: false, error: 'no such route', code: 'not_found' });
    const error =
      where.state === 'ready'
        ? `no such route: this is the svc relay's API and phone socket; its console is at ${where.url}`
        : `no such route: this is the svc relay's API and phone socket; its console (${where.url}) is not built: run "npm run build:console"`;
    return reply.send({ ok: false, error, code: 'not_found', console: where.url });
  }
}
