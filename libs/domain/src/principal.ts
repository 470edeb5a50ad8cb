/** Who is asking: a paired phone (by its session) or the operator on loopback. */
export type Principal = { kind: 'device'; tokenPrefix: string; deviceId: string; deviceName: string } | { kind: 'operator' };

export function actorOf(p: Principal): string {
  return p.kind === 'operator' ? 'operator' : `device:${p.tokenPrefix}`;
}
