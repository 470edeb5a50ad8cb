import type { ChainCut } from '@svc/console-api';
import { exact } from './format';

/**
 * Where a chain check proved the log from: "from seq 1", or for a pruned log "from seq N (cut at seq M,
 * <time>)": the records before the cut were dropped and the log's own log.pruned record says so.
 */
export function provenFrom(fromSeq: number, cut: ChainCut | null): string {
  return `from seq ${fromSeq}${cutNote(cut)}`;
}

/** " (cut at seq M, <time>)" for a pruned log; nothing for one that starts at seq 1. */
export function cutNote(cut: ChainCut | null): string {
  if (!cut) return '';
  const at = Date.parse(cut.at);
  return ` (cut at seq ${cut.seq}, ${Number.isNaN(at) ? cut.at : exact(at)})`;
}
