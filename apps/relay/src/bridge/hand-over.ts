import {
  actorOf,
  askHandOver,
  checkHandOverMessage,
  confirmationSide,
  DomainError,
  HAND_OVER_PATH,
  HAND_OVER_VERB,
  handOverAnswer,
  handOverText,
  pickDevice,
  type Driver,
  type HandOverAnswer,
} from '@svc/domain';
import type { CommandOrigin } from '@svc/events';
import { randomUUID } from 'node:crypto';
import type { Clock } from '../common/loop/clock';
import type { CommandLoop } from '../common/loop/command-loop';
import type { BridgeService } from './bridge.service';

export type HandOverRequest = { message: string; timeoutSeconds: number; selector?: string; origin?: CommandOrigin };

/**
 * Asks the phone's user to take over (libs/domain hand-over.ts) and waits for their answer: the relay's
 * `bridge.confirm` with the agent's message, ended by the user's Allow (done) or Deny (declined), or by the
 * confirmation sweep on the relay's clock (timed out). Only a phone that shows `bridge.confirm` can be asked:
 * the unmodified app drops it (BridgeCommandHandler.kt:270-276), and its own modal comes only with a command
 * it then carries out, so for it the hand-over is refused rather than faked (docs/COMPATIBILITY.md).
 */
export async function handOver(
  deps: { bridge: BridgeService; loop: CommandLoop; clock: Clock },
  driver: Driver,
  r: HandOverRequest,
): Promise<{ answer: HandOverAnswer; requestId: string; device: string }> {
  const message = checkHandOverMessage(r.message);
  const device = pickDevice(deps.loop.models, { selector: r.selector, driver }, deps.clock.now());
  const conn = deps.bridge.connOf(device);
  if (!conn) throw new DomainError('bridge.no_device', 'unavailable', `the phone "${device.deviceName}" is not connected`);
  if (confirmationSide(conn.supports) !== 'relay')
    throw new DomainError(
      'bridge.hand_over_unsupported',
      'conflict',
      `the app on "${device.deviceName}" cannot show a hand-over prompt (it shows only its own confirmation of a command it then carries out): ask the user in the conversation instead`,
    );
  const requestId = randomUUID();
  await deps.loop.run(actorOf(driver.caller), (m, now) =>
    askHandOver(m, { requestId, tokenPrefix: device.tokenPrefix, timeoutSeconds: r.timeoutSeconds, origin: r.origin }, now),
  );
  const decision = await deps.bridge.askPhone(device, requestId, HAND_OVER_PATH, HAND_OVER_VERB, handOverText(message));
  return { answer: handOverAnswer(decision), requestId, device: device.deviceName };
}
