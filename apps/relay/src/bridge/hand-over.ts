import {
  actorOf,
  askHandOver,
  checkHandOverMessage,
  confirmationSide,
  DomainError,
  endConfirmation,
  HAND_OVER_PATH,
  HAND_OVER_VERB,
  handOverAnswer,
  handOverText,
  handOverThreadText,
  pickDevice,
  readHandOverReply,
  type Driver,
  type HandOverAnswer,
} from '@svc/domain';
import type { CommandOrigin } from '@svc/events';
import { randomUUID } from 'node:crypto';
import type { Clock } from '../common/loop/clock';
import type { CommandLoop } from '../common/loop/command-loop';
import type { PhoneThreadsService } from '../threads/threads.service';
import type { BridgeService } from './bridge.service';

export type HandOverRequest = { message: string; timeoutSeconds: number; selector?: string; origin?: CommandOrigin; signal?: AbortSignal };
export type HandOverResult = { answer: HandOverAnswer; requestId: string; device: string; via: 'thread' | 'confirm'; note?: string };
type Deps = { bridge: BridgeService; loop: CommandLoop; clock: Clock; threads: PhoneThreadsService };

/**
 * Asks the phone's user to take over (libs/domain hand-over.ts) and waits for their answer, a pending
 * confirmation on the relay's clock either way (its deadline sweep is the timeout). A phone that shows
 * `bridge.confirm` is asked with it (Allow: done, Deny: declined). The unmodified app drops that frame
 * (BridgeCommandHandler.kt:270-276) but shows a Thread message with a reply box, so it is asked in a
 * Thread message whose id is the request id, and the reply that answers it (`handOverReplied`) ends it.
 * Handing over is when the user leaves the app for another one, and the Threads queue outlives the socket:
 * a Thread hand-over waits through disconnects (its message is delivered, and answered, on reconnect); only
 * the phone's session ending (unpaired, revoked, expired) ends it as phone_gone. A `bridge.confirm` one ends
 * with its socket. A cancelled MCP request ends the question too, and a Thread message not yet delivered is taken back.
 */
export async function handOver(deps: Deps, driver: Driver, r: HandOverRequest): Promise<HandOverResult> {
  const message = checkHandOverMessage(r.message);
  const device = pickDevice(deps.loop.models, { selector: r.selector, driver }, deps.clock.now());
  const conn = deps.bridge.connOf(device);
  if (!conn) throw new DomainError('bridge.no_device', 'unavailable', `the phone "${device.deviceName}" is not connected`);
  const via = confirmationSide(conn.supports) === 'relay' ? 'confirm' : 'thread';
  if (via === 'thread' && !deps.threads.enabled)
    throw new DomainError(
      'bridge.hand_over_unsupported',
      'conflict',
      `the app on "${device.deviceName}" shows a hand-over only as a Threads message, and Threads are off on this relay (PHONE_ENABLED=1 turns them on): ask the user in the conversation instead`,
    );
  if (via === 'thread' && deps.loop.models.phoneThreads.subscriber()?.tokenPrefix !== device.tokenPrefix)
    throw new DomainError(
      'bridge.hand_over_unsupported',
      'conflict',
      `"${device.deviceName}" does not receive Threads messages, the only way its app can show a hand-over: ask the user to turn on agent messages in the app, or ask them in the conversation instead`,
    );
  const requestId = randomUUID();
  const actor = actorOf(driver.caller);
  const end = (reason: string) =>
    deps.loop.run(actor, (m) =>
      endConfirmation(m, { requestId, tokenPrefix: device.tokenPrefix }, 'relay', () => ['confirmation_cancelled', reason]),
    );
  // Watched before the ask: a session ended after it is seen, one ended before makes the ask refuse.
  const sessionEnded = deps.loop.bus.ofType('session.revoked', 'session.expired').subscribe((e) => {
    if (e.data.tokenPrefix === device.tokenPrefix) void end("the phone's session ended (unpaired) before its user answered").catch(() => undefined);
  });
  try {
    await deps.loop.run(actor, (m, now) =>
      askHandOver(m, { requestId, tokenPrefix: device.tokenPrefix, timeoutSeconds: r.timeoutSeconds, origin: r.origin }, now),
    );
  } catch (err) {
    sessionEnded.unsubscribe();
    throw err;
  }
  // The reply that answered a Thread hand-over is taken in its name: its words come back as the note.
  let replyId: string | undefined;
  const taken = deps.loop.bus.ofType('phone.replies_handed').subscribe((e) => {
    if (e.data.by === `hand_over:${requestId}`) replyId = e.data.replyIds[0];
  });
  const onAbort = () => void end('the agent stopped waiting for the hand-over').catch(() => undefined);
  // Awaited from here on, so an ending written from now (an abort included) reaches this waiter.
  const decided = deps.bridge.askPhone(device, requestId, HAND_OVER_PATH, HAND_OVER_VERB, via === 'confirm' ? handOverText(message) : null);
  r.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    if (r.signal?.aborted) onAbort();
    if (via === 'thread') {
      try {
        await deps.threads.post({ text: handOverThreadText(message), title: 'Take over', messageId: requestId }, driver.caller);
      } catch (err) {
        await end('the Thread message could not be posted');
        throw err;
      }
    }
    const decision = await decided;
    const answer = handOverAnswer(decision);
    if (via === 'thread' && answer !== 'done' && answer !== 'declined') await deps.threads.cancelIfQueued(requestId, driver.caller);
    const note = replyId ? readHandOverReply(deps.loop.models.phoneThreads.reply(replyId)?.text ?? '').note : undefined;
    return { answer, requestId, device: device.deviceName, via, ...(note ? { note } : {}) };
  } finally {
    sessionEnded.unsubscribe();
    taken.unsubscribe();
    r.signal?.removeEventListener('abort', onAbort);
  }
}
