import { Body, Controller, Get, Header, HttpCode, Post, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Auth } from '../common/auth/auth';
import { TransparencyService } from './transparency.service';
import { WitnessPushService } from './witness-push.service';
import { ConsistencyQuery, CosignatureDto, InclusionQuery, RefusalDto } from './transparency.dto';

/**
 * The transparency log over HTTP (issue 39, docs/PROTOCOL.md "Transparency log"):
 * - `GET /log/checkpoint` (public): the newest C2SP checkpoint, signed, with the witnesses' cosignatures of
 *   that tree appended. It reveals a size and a root hash, nothing of any record.
 * - `GET /log/proof/consistency` (public): hashes of subtrees only, what a witness off the host needs.
 * - `GET /log/proof/inclusion` (operator key): it names a record and returns it as stored, so it is the
 *   operator's (there is no auditor grant for paired devices yet).
 * - `GET /log/witnesses` (operator key): each witness's newest cosigned tree head and newest refusal.
 * - `POST /log/cosignature`, `POST /log/witness-refusal` (public routes, the signature is the credential):
 *   accepted only under a key in RELAY_WITNESS_VKEYS.
 */
@Controller('/log')
export class TransparencyController {
  constructor(
    private readonly log: TransparencyService,
    private readonly push: WitnessPushService,
  ) {}

  @Get('/checkpoint')
  @Auth('public')
  async checkpoint(@Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const cp = await this.log.checkpoint();
    void reply.header('content-type', 'text/plain; charset=utf-8').header('cache-control', 'no-store');
    return cp.note;
  }

  @Get('/proof/consistency')
  @Auth('public')
  @Header('Cache-Control', 'no-store')
  consistency(@Query() q: ConsistencyQuery) {
    return this.log.consistency(Number(q.from), Number(q.to));
  }

  @Get('/proof/inclusion')
  @Auth('operator')
  @Header('Cache-Control', 'no-store')
  inclusion(@Query() q: InclusionQuery) {
    return this.log.inclusion(Number(q.seq), q.size === undefined ? undefined : Number(q.size));
  }

  /** What each configured witness cosigned last and its newest refusal (the operator's: the Store page's panel reads it). */
  @Get('/witnesses')
  @Auth('operator')
  @Header('Cache-Control', 'no-store')
  witnesses() {
    return witnessesView(this.log, this.push);
  }

  @Post('/cosignature')
  @Auth('public', undefined, { bodyLimit: 4096 })
  @HttpCode(200)
  async cosignature(@Body() body: CosignatureDto) {
    return { ok: true, ...(await this.log.cosign(body.size, body.cosignature)) };
  }

  @Post('/witness-refusal')
  @Auth('public', undefined, { bodyLimit: 4096 })
  @HttpCode(200)
  refusal(@Body() body: RefusalDto) {
    return { ok: true, ...this.log.refusal(body) };
  }
}

/** The same view for the console's Store page, under the console API (where its sign-in cookie goes). */
@Controller('/console/api/store/witnesses')
export class ConsoleWitnessesController {
  constructor(
    private readonly log: TransparencyService,
    private readonly push: WitnessPushService,
  ) {}

  @Get()
  @Auth('operator')
  @Header('Cache-Control', 'no-store')
  witnesses() {
    return witnessesView(this.log, this.push);
  }
}

/** Each witness: what it cosigned last, its newest refusal, and (when the relay submits to it: RELAY_WITNESS_URLS) what it answered last. */
function witnessesView(log: TransparencyService, push: WitnessPushService) {
  return {
    ok: true,
    configured: log.witnesses.map((w) => w.name),
    witnesses: log.witnessView().map((r) => ({ ...r, push: push.state(r.name) })),
  };
}
