import { phoneConfirmationAnswered, phoneConfirmationFailed, phoneDeniedUnasked } from '@svc/domain';
import type { BridgeEvent, BridgeFailure, CommandEvidence } from '@svc/events';
import { performance } from 'node:perf_hooks';
import type { Decide } from '../common/loop/command-loop';
import type { SentCommand } from './in-flight-commands';

const latencyOf = (p: SentCommand) => Math.round(((p.answeredAt ?? performance.now()) - p.started) * 1000) / 1000;

/**
 * The phone answered a sent command: `bridge.command_answered` (with the foreground app when the answer
 * showed a new one), after the user's decision when the app confirmed it itself, or the record that it
 * refused a command nobody asked it to confirm.
 */
export function commandAnswered(
  p: SentCommand,
  status: number,
  body: Record<string, unknown>,
  evidence: CommandEvidence | null,
  currentApp?: string,
): Decide<BridgeEvent> {
  const latencyMs = latencyOf(p);
  return (m) => [
    ...(p.phoneConfirms
      ? phoneConfirmationAnswered(m, { requestId: p.requestId, tokenPrefix: p.tokenPrefix, status, body })
      : phoneDeniedUnasked({ requestId: p.requestId, tokenPrefix: p.tokenPrefix, method: p.method, path: p.path, status, body })),
    {
      type: 'bridge.command_answered',
      data: {
        requestId: p.requestId,
        tokenPrefix: p.tokenPrefix,
        path: p.path,
        status,
        latencyMs,
        ...(currentApp ? { currentApp } : {}),
        evidence,
      },
    },
  ];
}

/** A sent command ended without an answer: `bridge.command_failed` (and the phone's confirmation as failed). */
export function commandFailed(p: SentCommand, reason: BridgeFailure): Decide<BridgeEvent> {
  const latencyMs = latencyOf(p);
  return (m) => [
    ...(p.phoneConfirms ? phoneConfirmationFailed(m, { requestId: p.requestId, tokenPrefix: p.tokenPrefix, timedOut: reason === 'timeout' }) : []),
    {
      type: 'bridge.command_failed',
      data: {
        requestId: p.requestId,
        tokenPrefix: p.tokenPrefix,
        path: p.path,
        reason,
        latencyMs,
        evidence: p.before === undefined ? null : { before: p.before, after: null },
      },
    },
  ];
}
