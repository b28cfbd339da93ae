// Who may use the codec server (docs/security.md, "Codec server"): CODEC_AUTH_MODE=token, one static
// bearer token (`npm start`, where there is no identity provider), or CODEC_AUTH_MODE=oidc, the
// user's own token as the Web UI forwards it (TEMPORAL_CODEC_PASS_ACCESS_TOKEN=true), verified
// against the issuer's JWKS and authorised per namespace (X-Namespace) from a claim.
import { z } from 'zod';
import { csv, optionalBool } from './env-values';

export const codecAuthEnvShape = {
  CODEC_AUTH_MODE: z.enum(['token', 'oidc'], { error: 'must be token or oidc' }).default('token'),
  // The identity provider: tokens must carry this `iss` exactly, and this `aud` (one of a comma list).
  CODEC_OIDC_ISSUER: z.url({ error: 'must be the issuer URL (the `iss` of its tokens)' }).optional(),
  CODEC_OIDC_AUDIENCE: z.string().min(1).optional(),
  // Where its signing keys are; unset: the `jwks_uri` of <issuer>/.well-known/openid-configuration.
  CODEC_OIDC_JWKS_URL: z.url({ error: 'must be a URL' }).optional(),
  // The claim that lists the user's namespaces: entries `<namespace>:<role>` (Temporal's `permissions`
  // form: read, write, worker, admin) or a bare `<namespace>`.
  CODEC_OIDC_NAMESPACES_CLAIM: z.string().min(1).default('permissions'),
  // Or a mapping from that claim's values (e.g. groups) to namespaces: `group=ns1|ns2,other=ns3`.
  CODEC_OIDC_NAMESPACE_MAP: z
    .string()
    .regex(/^\s*[^=,]+=[^=,]+(\s*,\s*[^=,]+=[^=,]+)*\s*$/, 'must be group=namespace1|namespace2[,group=...]')
    .optional(),
  // Seconds of clock skew tolerated on exp and nbf.
  CODEC_OIDC_CLOCK_SKEW_S: z.coerce.number().int().min(0).max(300).default(30),
  // POST /encode (payloads in, ciphertext out): unset, on only for the static token outside production.
  CODEC_ENCODE_ENABLED: optionalBool,
  // Requests per minute per client (the OIDC token's subject; the address for the static token or without a valid token).
  CODEC_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(600),
};

type CodecAuthEnv = z.output<z.ZodObject<typeof codecAuthEnvShape>>;

export interface OidcSettings {
  issuer: string;
  audiences: string[];
  jwksUrl?: string;
  namespacesClaim: string;
  /** Claim value → namespaces it grants. */
  namespaceMap: Record<string, string[]>;
  clockSkewS: number;
}

export interface CodecAuthConfig {
  mode: 'token' | 'oidc';
  oidc?: OidcSettings;
  encodeEnabled: boolean;
  rateLimitPerMinute: number;
}

/** Misconfiguration, one issue per variable: OIDC mode needs its issuer and audience. */
export function codecAuthIssues(env: CodecAuthEnv): { variable: string; message: string }[] {
  if (env.CODEC_AUTH_MODE !== 'oidc') return [];
  const issues: { variable: string; message: string }[] = [];
  if (!env.CODEC_OIDC_ISSUER)
    issues.push({ variable: 'CODEC_OIDC_ISSUER', message: 'is required when CODEC_AUTH_MODE=oidc' });
  if (!env.CODEC_OIDC_AUDIENCE)
    issues.push({ variable: 'CODEC_OIDC_AUDIENCE', message: 'is required when CODEC_AUTH_MODE=oidc' });
  return issues;
}

export function codecAuthConfig(env: CodecAuthEnv, production: boolean): CodecAuthConfig {
  const oidc = env.CODEC_AUTH_MODE === 'oidc';
  return {
    mode: env.CODEC_AUTH_MODE,
    ...(oidc
      ? {
          oidc: {
            issuer: env.CODEC_OIDC_ISSUER!,
            audiences: csv(env.CODEC_OIDC_AUDIENCE),
            ...(env.CODEC_OIDC_JWKS_URL ? { jwksUrl: env.CODEC_OIDC_JWKS_URL } : {}),
            namespacesClaim: env.CODEC_OIDC_NAMESPACES_CLAIM,
            namespaceMap: parseNamespaceMap(env.CODEC_OIDC_NAMESPACE_MAP),
            clockSkewS: env.CODEC_OIDC_CLOCK_SKEW_S,
          },
        }
      : {}),
    encodeEnabled: env.CODEC_ENCODE_ENABLED ?? (!oidc && !production),
    rateLimitPerMinute: env.CODEC_RATE_LIMIT_PER_MINUTE,
  };
}

function parseNamespaceMap(value: string | undefined): Record<string, string[]> {
  const map: Record<string, string[]> = {};
  for (const pair of csv(value)) {
    const [group, namespaces] = pair.split('=').map((s) => s.trim());
    map[group] = [...(map[group] ?? []), ...namespaces.split('|').map((s) => s.trim())].filter(Boolean);
  }
  return map;
}
