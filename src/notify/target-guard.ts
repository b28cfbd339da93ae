// Where an outgoing event may go (docs/security.md, "Outgoing events"): a merchant-supplied URL must
// not be a way into our own network. Before each attempt the host is resolved here and every address
// it resolves to is checked; the connection then goes to the checked address and nowhere else
// (pinnedDispatcher), so a DNS answer that changes between the check and the connect cannot
// redirect it. Runs in activities only: DNS is not deterministic, workflow code never calls it.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { Agent } from 'undici';

/** What a deployment allows: see outboundPolicyOf for where each part comes from. */
export interface OutboundPolicy {
  /** Production: https only. */
  httpsOnly: boolean;
  /** Loopback, RFC 1918, unique-local and shared (CGNAT) addresses: allowed (development's `notify listen`). */
  allowPrivate: boolean;
  /** NOTIFY_ALLOWED_HOSTS: when set, only these host names (lower case) are targets. */
  allowedHosts?: readonly string[];
}

/** A target this deployment never sends to: recorded on the delivery, never retried. */
export class RefusedTarget extends Error {
  override readonly name = 'RefusedTarget';
}

export interface CheckedTarget {
  url: URL;
  /** The address that was checked: the only one the connection may use. */
  address: string;
  family: 4 | 6;
}

export type Resolver = (host: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (host) =>
  new Promise((resolve, reject) =>
    dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))),
  );

/** Never a target, whatever the policy: link-local (cloud metadata), multicast, unspecified, reserved. */
const NEVER = blockList([
  ['0.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['192.0.2.0', 24, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['198.51.100.0', 24, 'ipv4'],
  ['203.0.113.0', 24, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'],
  ['240.0.0.0', 4, 'ipv4'],
  ['::', 128, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
  ['2001:db8::', 32, 'ipv6'],
  ['100::', 64, 'ipv6'],
]);

/** Our own network: a target only when the policy allows private addresses. */
const PRIVATE = blockList([
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['127.0.0.0', 8, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['::1', 128, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
]);

function blockList(ranges: [string, number, 'ipv4' | 'ipv6'][]): BlockList {
  const list = new BlockList();
  for (const [net, prefix, type] of ranges) list.addSubnet(net, prefix, type);
  return list;
}

/**
 * The IPv4 address an IPv6 one carries, when it carries one a packet can reach: IPv4-mapped
 * (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96) and 6to4 (2002::/16).
 */
function embeddedIPv4(ipv6: string): string | undefined {
  const words = expandIPv6(ipv6);
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeros = (from: number, to: number) => words.slice(from, to).every((w) => w === 0);
  if (zeros(0, 5) && (words[5] === 0xffff || words[5] === 0)) return v4(words[6]!, words[7]!);
  if (words[0] === 0x64 && words[1] === 0xff9b && zeros(2, 6)) return v4(words[6]!, words[7]!);
  if (words[0] === 0x2002) return v4(words[1]!, words[2]!);
  return undefined;
}

/** The eight 16-bit words of an IPv6 address (a dotted IPv4 tail included). */
function expandIPv6(ip: string): number[] {
  let text = ip.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const parse = (s: string | undefined) => (s ? s.split(':').map((w) => parseInt(w, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  const fill = tail === undefined ? [] : new Array<number>(8 - left.length - right.length).fill(0);
  return [...left, ...fill, ...right];
}

/** Why an address is not a target under the policy, or undefined when it is one. */
export function addressRefusal(address: string, policy: Pick<OutboundPolicy, 'allowPrivate'>): string | undefined {
  const family = isIP(address);
  if (family === 0) return `${address} is not an IP address`;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (NEVER.check(address, type))
    return `${address} is a link-local, multicast, unspecified or reserved address (never a target)`;
  if (PRIVATE.check(address, type))
    return policy.allowPrivate
      ? undefined
      : `${address} is a loopback or private address (allowed only outside production, or with NOTIFY_ALLOW_PRIVATE=true)`;
  // An IPv6 address that carries an IPv4 one is judged by the IPv4 one (after ::1 and :: above).
  const inner = family === 6 ? embeddedIPv4(address) : undefined;
  if (inner !== undefined) return addressRefusal(inner, policy);
  // Outside 2000::/3 nothing is global unicast in IPv6.
  if (family === 6 && !/^[23]/.test(expandIPv6(address)[0]!.toString(16).padStart(4, '0')))
    return `${address} is not a global unicast address`;
  return undefined;
}

/** The URL's shape under the policy (scheme, credentials, the allow-list): no lookup. */
export function urlRefusal(raw: string, policy: OutboundPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not a URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `${url.protocol} is not http(s)`;
  if (policy.httpsOnly && url.protocol !== 'https:') return 'must be https:// in production';
  if (url.username || url.password) return 'must not carry credentials';
  const host = hostOf(url);
  if (policy.allowedHosts && !policy.allowedHosts.includes(host)) return `host ${host} is not in NOTIFY_ALLOWED_HOSTS`;
  return undefined;
}

/** The host name as compared and resolved: lower case, no IPv6 brackets, no trailing dot. */
function hostOf(url: URL): string {
  return url.hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
}

/**
 * Resolves the URL's host and checks the URL and every address the name resolves to (one bad
 * address refuses the whole name: the answer order is the resolver's, not ours). Throws
 * RefusedTarget naming the rule; a name that does not resolve is an ordinary (retried) error.
 */
export async function checkTarget(
  raw: string,
  policy: OutboundPolicy,
  resolve: Resolver = systemResolver,
): Promise<CheckedTarget> {
  const shape = urlRefusal(raw, policy);
  if (shape) throw new RefusedTarget(`refused target: ${shape}`);
  const url = new URL(raw);
  const host = hostOf(url);
  const addresses: LookupAddress[] = isIP(host) ? [{ address: host, family: isIP(host) }] : await resolve(host);
  if (addresses.length === 0) throw new Error(`${host} resolved to no address`);
  for (const a of addresses) {
    const why = addressRefusal(a.address, policy);
    if (why) throw new RefusedTarget(`refused target: ${host}: ${why}`);
  }
  const first = addresses[0]!;
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}

/**
 * A dispatcher whose every connection goes to the checked address (no second lookup); TLS still
 * checks the certificate against the URL's host name (the servername is the host, not the IP).
 * Close it after the request.
 */
export function pinnedDispatcher(target: CheckedTarget): Agent {
  return new Agent({
    connect: {
      lookup: (_host, options, callback) => {
        const all = (options as { all?: boolean }).all;
        if (all) (callback as (e: null, a: LookupAddress[]) => void)(null, [target]);
        else callback(null, target.address, target.family);
      },
    },
  });
}

/**
 * The policy of a process: https only in production; private addresses outside production unless
 * NOTIFY_ALLOW_PRIVATE says otherwise; NOTIFY_ALLOWED_HOSTS when set.
 */
export function outboundPolicyOf(config: {
  production?: boolean;
  notify?: { allowPrivate?: boolean; allowedHosts?: readonly string[] };
}): OutboundPolicy {
  const production = config.production === true;
  return {
    httpsOnly: production,
    allowPrivate: config.notify?.allowPrivate ?? !production,
    ...(config.notify?.allowedHosts ? { allowedHosts: config.notify.allowedHosts } : {}),
  };
}

/** Development's policy, for callers built without a config (tests, the merchant's own tools). */
export const DEVELOPMENT_POLICY: OutboundPolicy = { httpsOnly: false, allowPrivate: true };
