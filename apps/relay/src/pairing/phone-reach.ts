import { isLoopbackHost, urlHost } from '../common/config/hosts';

const hostOf = (url: string): string => new URL(url).hostname.replace(/^\[|\]$/g, '');

/**
 * The one rule for "no phone can use this QR", said wherever a code is shown (`svc relay pair`, the
 * console's Pairing page) and by `svc relay doctor` and the Connectivity page: the relay socket the QR
 * names is a loopback address and no other route it carries (Secure Link's origin, Reach) reaches
 * further. `lan`: this machine's LAN address, the one phones would dial once the relay listens on every
 * interface. `null`: a phone can reach at least one route.
 */
export function unreachableQrWarning(relayUrl: string, otherRoutes: readonly string[], lan: string | null): string | null {
  const host = hostOf(relayUrl);
  if (!isLoopbackHost(host)) return null;
  if (otherRoutes.some((url) => !isLoopbackHost(hostOf(url)))) return null;
  const u = new URL(relayUrl);
  const wouldUse = lan
    ? `phones on this network would use ${u.protocol}//${urlHost(lan)}:${u.port}`
    : 'this machine has no LAN address right now: join a network first';
  return `This QR points at ${host}: a phone cannot reach it. Start the relay with RELAY_HOST=0.0.0.0 (${wouldUse}), or serve phones through Secure Link or Reach.`;
}
