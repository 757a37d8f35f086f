// Where a webhook may go: never to the server's own network (loopback, private, link-local,
// unique-local and other non-public ranges) unless WEBHOOK_ALLOW_PRIVATE_ADDRESSES is set. The check
// is made on the address actually connected to (`guardedLookup`), so a name that resolves to a public
// address when registered and to a private one when delivered (DNS rebinding) is still refused.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
  ['64:ff9b::', 96], // NAT64: reaches IPv4 addresses, private ones included
  ['2001:db8::', 32], // documentation
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

const MAPPED_IPV4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/** True for an IP address outside the public internet. */
export function isPrivateAddress(address: string): boolean {
  const mapped = MAPPED_IPV4.exec(address);
  if (mapped) return NON_PUBLIC.check(mapped[1], 'ipv4');
  const family = isIP(address);
  if (family === 4) return NON_PUBLIC.check(address, 'ipv4');
  if (family === 6) return NON_PUBLIC.check(address, 'ipv6');
  return false;
}

/** The host of a URL as an IP address ([::1] -> ::1), or null when it is a name. */
export function literalAddress(hostname: string): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) ? bare : null;
}

/** A name that always means this machine, whatever DNS says. */
export const isLocalName = (hostname: string) => /(^|\.)localhost\.?$/i.test(hostname);

/**
 * A name that resolves to a private address. The message names the host only: what a name resolves to
 * inside the server's network is not for the endpoint's owner to learn (it is shown with the attempt).
 */
export class PrivateAddressError extends Error {
  constructor(host: string) {
    super(`${host} resolves to a private or local address; webhooks are not delivered there`);
    this.name = 'PrivateAddressError';
  }
}

/**
 * A `lookup` for http.request that resolves as usual and refuses a private address, so the
 * connection is made to exactly the address that was checked.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '', 0);
    if (addresses.some((entry) => isPrivateAddress(entry.address))) return callback(new PrivateAddressError(hostname), '', 0);
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    const [first] = addresses;
    callback(null, first.address, first.family);
  });
};
