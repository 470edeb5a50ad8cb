import { Inject, Injectable } from '@nestjs/common';
import { DomainError, forgetSecret, setSecret, type SecretInfo } from '@svc/domain';
import { CommandLoop } from '../common/loop/command-loop';
import type { RelayConfig } from '../common/config/relay-config';
import { RELAY_CONFIG } from '../common/auth/tokens';
import { PersonalDataService } from '../personal/personal-data.service';

/**
 * Named secrets for agents to type (libs/domain secrets.ts): set, replace and forget them, each an event
 * whose value is sealed (personal-sealer.ts); forgetting (and replacing) destroys the old value's keys
 * through the personal-data forgetting, and resolves once they are gone and the snapshots renewed.
 */
@Injectable()
export class SecretsService {
  constructor(
    private readonly loop: CommandLoop,
    private readonly personal: PersonalDataService,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
  ) {}

  list(): SecretInfo[] {
    return this.loop.models.secrets.list();
  }

  get max(): number {
    return this.config.bridge.mcpSecretsMax;
  }

  async set(actor: string, name: string, value: string): Promise<{ replaced: boolean; seq: number }> {
    const keys = this.keys();
    // The key ids are read inside the decision: a set racing this one has made its key by then.
    const [e] = await this.loop.run(actor, (m) => setSecret(m, { name, value, keyIds: keys.ids() }, this.max));
    await this.personal.settled();
    return { replaced: (e.data as { replaced: boolean }).replaced, seq: e.seq };
  }

  async forget(actor: string, name: string): Promise<{ keys: number; seq: number }> {
    const keys = this.keys();
    const [e] = await this.loop.run(actor, (m) => forgetSecret(m, name, keys.ids()));
    await this.personal.settled();
    return { keys: (e.data as { keys: string[] }).keys.length, seq: e.seq };
  }

  /** Secrets are sealed or not kept: a relay that writes personal content in plain text refuses them. */
  private keys() {
    const keys = this.personal.keys;
    if (!keys) throw new DomainError('secrets.unsealed', 'unavailable', 'this relay does not seal personal content, so it keeps no secrets');
    return keys;
  }
}
