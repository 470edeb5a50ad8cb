/** Who called: a paired phone (session bearer), the operator (loopback), or the API bearer (voice routes only, spec 5). */
export type Principal = { kind: 'device'; tokenPrefix: string; deviceId: string; deviceName: string } | { kind: 'operator' } | { kind: 'api' };

export function actorOf(p: Principal): string {
  return p.kind === 'device' ? `device:${p.tokenPrefix}` : p.kind;
}
