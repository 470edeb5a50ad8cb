import { Inject, Injectable } from '@nestjs/common';
import { DomainError, setInsecureApiBearer } from '@svc/domain';
import type { RelayConfig } from '../common/config/relay-config';
import { CommandLoop } from '../common/loop/command-loop';
import { RELAY_CONFIG } from '../common/auth/tokens';
import type { SecurityPatch } from './voice.dto';

/** Spec 4.10: the runtime security toggles as the operator reads them, and the API-bearer escape hatch (until restart). */
@Injectable()
export class RelaySecurity {
  constructor(
    private readonly loop: CommandLoop,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
  ) {}

  state() {
    return {
      ok: true,
      allow_insecure_api_bearer: this.loop.models.voice.allowInsecureApiBearer,
      trust_proxy_headers: this.config.trustProxyHeaders,
      tls: this.config.tls !== null,
      api_key_configured: Boolean(this.config.apiServer.key),
    };
  }

  /** `sent`: the keys the body named; the switch is the only one. */
  async change(body: SecurityPatch, sent: readonly string[]) {
    if (sent.length !== 1) throw new DomainError('validation_failed', 'invalid', 'send {"allow_insecure_api_bearer": true|false}');
    await this.loop.run('operator', (models) => setInsecureApiBearer(models, body.allow_insecure_api_bearer));
    return this.state();
  }
}
