// NOTIFY_SECRET: one Standard Webhooks secret, or several during a rotation (docs/security.md,
// "Rotating NOTIFY_SECRET"). Kept apart from the signing code so the config loader can validate it
// without loading the signing package.

/** A Standard Webhooks secret: `whsec_` then base64 of at least 24 bytes. */
export const NOTIFY_SECRET_PATTERN = /^whsec_[A-Za-z0-9+/]{32,}={0,2}$/;

/** The entries of a NOTIFY_SECRET value: separated by commas or white space, duplicates dropped. */
export function notifySecretEntries(raw: string): string[] {
  return [...new Set(raw.split(/[\s,]+/).filter(Boolean))];
}

/**
 * Why a NOTIFY_SECRET value is refused (the position of the first malformed entry and the rule,
 * never its value), or undefined when every entry is a whsec_ secret.
 */
export function notifySecretIssue(raw: string): string | undefined {
  const entries = raw.split(/[\s,]+/).filter(Boolean);
  if (entries.length === 0) return 'must hold at least one whsec_ secret';
  const bad = entries.findIndex((e) => !NOTIFY_SECRET_PATTERN.test(e));
  if (bad < 0) return undefined;
  const which = entries.length === 1 ? '' : `entry ${bad + 1} of ${entries.length}: `;
  return `${which}must start with whsec_ followed by base64 of at least 24 bytes`;
}
