import { Scheduler } from '../../apps/relay/src/common/loop/scheduler';
import { WitnessPushService } from '../../apps/relay/src/transparency/witness-push.service';
import { svc } from './cli';
import { spawnSvc, type SvcProcess } from './dist';
import { pairPhone, startRelay, type TestRelay } from './harness';
import { waitFor } from './standby';

/**
 * A relay that submits its checkpoints to the CLI's witness serving `--listen` (its own process and home):
 * the relay's home is made first, for the log's verifier key the witness trusts.
 */
export async function relayWithListeningWitness(
  witnessHome: string,
  name: string,
): Promise<{ relay: TestRelay; witness: SvcProcess; url: string; logVkey: string; wvkey: string }> {
  const probe = await startRelay();
  await probe.close();
  const logVkey = (await svc(['relay', 'events', 'vkey'], { SVC_HOME: probe.home })).stdout.trim();
  const wvkey = (await svc(['relay', 'witness', '--home', witnessHome, '--name', name, '--print-vkey'])).stdout.trim();
  const witness = spawnSvc(['relay', 'witness', '--home', witnessHome, '--log-vkey', logVkey, '--listen', '127.0.0.1:0'], { NO_COLOR: '1' });
  const url = await waitFor('the witness to listen', async () => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(witness.stdout())?.[1], 30_000);
  const relay = await startRelay({ home: probe.home, env: { RELAY_WITNESS_VKEYS: wvkey, RELAY_WITNESS_URLS: `${name}=${url}` } });
  return { relay, witness, url, logVkey, wvkey };
}

/**
 * One submission round: the log grows (a pairing), the relay's clock passes the publish interval and any
 * wait after a failure, the tick submits; resolves once every witness has answered.
 */
export async function submitRound(relay: TestRelay): Promise<void> {
  (await pairPhone(relay)).phone.close();
  await relay.loop.drain();
  relay.clock.advanceSeconds(15 * 60);
  await relay.app.get(Scheduler).sweep();
  await relay.app.get(WitnessPushService).settled();
}
