// Production guards beyond "not the embedded development value" (docs/security.md, "Production
// mode and checklist"). Called from config.ts's schema when production mode is on; each issue
// names the variable and the rule, never the value.
import { csv } from './env-values';

/** The codec server's token guards every payload of history: a guessable one is refused. */
export const MIN_PRODUCTION_CODEC_TOKEN_LENGTH = 32;

/**
 * The form two secrets are compared in to catch a near-copy of a development value: surrounding
 * whitespace and quotes dropped, case folded. `" DEV-Codec-Token\n"` is the development token.
 */
export function foldSecret(value: string): string {
  return value
    .trim()
    .replace(/^(['"])(.*)\1$/s, '$2')
    .trim()
    .toLowerCase();
}

/** True when `value` is the development value `embedded`, or a near-copy of it. */
export function isNearCopy(value: string, embedded: string): boolean {
  return foldSecret(value) === foldSecret(embedded);
}

export interface ProductionGuardInput {
  CODEC_SERVER_TOKEN: string;
  CODEC_CORS_ORIGINS?: string;
  RETURN_LINK_KEY?: string;
}

/** The production-only rules on the codec server's settings and the return-link key. */
export function productionGuardIssues(env: ProductionGuardInput): { variable: string; message: string }[] {
  const issues: { variable: string; message: string }[] = [];
  if (env.CODEC_SERVER_TOKEN.trim().length < MIN_PRODUCTION_CODEC_TOKEN_LENGTH) {
    issues.push({
      variable: 'CODEC_SERVER_TOKEN',
      message: `must be at least ${MIN_PRODUCTION_CODEC_TOKEN_LENGTH} characters in production (e.g. openssl rand -hex 32)`,
    });
  }
  // The default (the Web UI on localhost) is a development convenience; production names its UI origins.
  if (csv(env.CODEC_CORS_ORIGINS).length === 0) {
    issues.push({
      variable: 'CODEC_CORS_ORIGINS',
      message: "is required in production: the Web UI's origin(s), comma-separated (https://temporal-ui.example.com)",
    });
  }
  // Unset means the development key, which anyone with the source could sign return links with.
  if (!env.RETURN_LINK_KEY) {
    issues.push({
      variable: 'RETURN_LINK_KEY',
      message:
        'is required in production (at least 32 random characters; the checkout starter and the receiver share it)',
    });
  }
  return issues;
}
