import { Controller, Delete, Get, Inject, Post, Req, Res } from '@nestjs/common';
import { DomainError, type Principal } from '@svc/domain';
import type { FastifyReply } from 'fastify';
import { Auth, Caller, type AuthedRequest } from '../common/auth/auth';
import { isSameOrigin } from '../common/http/net';
import { RELAY_CONFIG, RUNTIME, type Runtime } from '../common/auth/tokens';
import type { RelayConfig } from '../common/config/relay-config';
import { OperatorKey } from '../common/auth/operator-key';
import { driverOf, hostTrustOf, type HostTrust } from '../bridge/driver-of';
import { McpSessions } from './mcp-sessions';

/** An MCP message is a tool call's arguments at most: Device Control's largest input (a typed text, an intent) is far below. */
export const MCP_BODY_LIMIT = 256 * 1024;

/**
 * `/mcp`: the Model Context Protocol's Streamable HTTP transport over Device Control (issue 25). The same
 * credential as the Device Control routes (a session bearer with an active `bridge` grant, checked by the
 * auth hook on every request, so a revoked token stops at once); a browser's Origin must name this host.
 * The body is the relay's JSON (bounded in size and depth); the JSON-RPC inside it is the SDK's to read and
 * answer (its own JSON-RPC errors), as MCP clients expect, so no DTO reads it here.
 */
@Controller('mcp')
export class McpController {
  constructor(
    private readonly sessions: McpSessions,
    @Inject(RUNTIME) private readonly runtime: Runtime,
    @Inject(RELAY_CONFIG) config: RelayConfig,
    operatorKey: OperatorKey,
  ) {
    this.host = hostTrustOf(runtime, config, operatorKey);
  }

  /** What makes a request the relay's host (driver-of.ts). */
  private readonly host: HostTrust;

  @Post()
  @Auth('paired', 'bridge', { bodyLimit: MCP_BODY_LIMIT })
  post(@Req() req: AuthedRequest, @Res() reply: FastifyReply, @Caller() caller: Principal): Promise<void> {
    return this.handle(req, reply, caller);
  }

  @Get()
  @Auth('paired', 'bridge', { noHead: true })
  stream(@Req() req: AuthedRequest, @Res() reply: FastifyReply, @Caller() caller: Principal): Promise<void> {
    return this.handle(req, reply, caller);
  }

  @Delete()
  @Auth('paired', 'bridge')
  end(@Req() req: AuthedRequest, @Res() reply: FastifyReply, @Caller() caller: Principal): Promise<void> {
    return this.handle(req, reply, caller);
  }

  private async handle(req: AuthedRequest, reply: FastifyReply, caller: Principal): Promise<void> {
    const origin = req.headers.origin;
    if (origin !== undefined && !isSameOrigin(origin, req.headers.host))
      throw new DomainError('mcp.foreign_origin', 'forbidden', 'a browser page of another origin may not use /mcp');
    if (caller.kind !== 'device') throw new DomainError('auth.missing_bearer', 'unauthorized', 'send a session bearer');
    const driver = { ...driverOf(req, caller, this.host), caller };
    const id = sessionIdOf(req);
    let session = id === null ? null : (this.sessions.get(id, driver) ?? null);
    if (id !== null && !session)
      throw new DomainError(
        'mcp.unknown_session',
        'not_found',
        'unknown or ended MCP session: initialize a new one (POST /mcp without Mcp-Session-Id)',
      );
    if (!session) {
      const init = initializeParams(req);
      if (!init)
        throw new DomainError(
          'mcp.session_required',
          'invalid',
          'send Mcp-Session-Id (from the initialize answer), or an initialize request to open a session',
        );
      session = await this.sessions.open(driver, init.elicitation);
    }
    const s = session;
    reply.hijack();
    await this.sessions.serve(s, req.method === 'POST', () => s.transport.handleRequest(req.raw, reply.raw, req.body));
  }
}

/** `Mcp-Session-Id`: null when absent; one printable value of at most 128 characters, or the request is refused. */
function sessionIdOf(req: AuthedRequest): string | null {
  const v = req.headers['mcp-session-id'];
  if (v === undefined) return null;
  if (typeof v !== 'string' || !/^[\x21-\x7e]{1,128}$/.test(v))
    throw new DomainError('mcp.bad_session_id', 'invalid', 'Mcp-Session-Id must be one visible-ASCII value');
  return v;
}

/** A POST whose body is an `initialize` request: whether the client declares elicitation (it may then be asked things). */
function initializeParams(req: AuthedRequest): { elicitation: boolean } | null {
  const b = req.body as { method?: unknown; params?: { capabilities?: { elicitation?: unknown } } } | undefined;
  if (req.method !== 'POST' || typeof b !== 'object' || b === null || Array.isArray(b) || b.method !== 'initialize') return null;
  const caps = b.params?.capabilities;
  return { elicitation: typeof caps === 'object' && caps !== null && typeof caps.elicitation === 'object' && caps.elicitation !== null };
}
