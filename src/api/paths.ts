// Paths the spec marks 'not shown', with the project's defaults (docs/choices.md, from the
// real service's public material). Every one can be overridden through PaymentsClientOptions.paths.

export interface ApiPaths {
  /** Simulated transfer into a checkout's account (A2), test only. POST; the client adds `"dva": true` to the body. */
  simulateTransfer: string;
  /** Charge a card token (A4). POST. */
  chargeToken: string;
  /** Cancel card tokens (A5). PATCH, body `{auth_code: [ids]}`. */
  cancelToken: string;
  /** Query all transactions (A6). GET with the query parameters. */
  queryTransactions: string;
  /** Verify one transaction. GET; contains `{transaction_ref}`. */
  verifyTransaction: string;
  /** Terminal configuration (F1). POST, body `{serial_no}`. */
  terminalConfig: string;
  /** Key exchange (F2). POST `?refresh=<bool>`, body `{serial_no}`. */
  keyExchange: string;
  /** Initiate a terminal transaction (F3). POST; the client adds `terminal_id` to the body. */
  posTransaction: string;
  /** Requery a terminal transaction (F4). GET; contains `{merchant_ref}`. */
  posRequery: string;
}

export const DEFAULT_PATHS: Readonly<ApiPaths> = Object.freeze({
  simulateTransfer: '/virtual-account/simulate/payment',
  chargeToken: '/transaction/charge_card',
  cancelToken: '/transaction/cancel/recurring',
  queryTransactions: '/transaction',
  verifyTransaction: '/transaction/verify/{transaction_ref}',
  terminalConfig: '/softpos/terminal/configuration',
  keyExchange: '/softpos/terminal/key-exchange',
  posTransaction: '/transaction',
  posRequery: '/transaction/by-ref/{merchant_ref}',
});

const REQUIRED_PLACEHOLDERS: Partial<Record<keyof ApiPaths, string>> = {
  verifyTransaction: '{transaction_ref}',
  posRequery: '{merchant_ref}',
};

/** Merges overrides over the defaults; throws on a path that cannot work. */
export function resolvePaths(overrides: Partial<ApiPaths> = {}): ApiPaths {
  const paths: ApiPaths = { ...DEFAULT_PATHS };
  const problems: string[] = [];
  for (const [key, value] of Object.entries(overrides) as [keyof ApiPaths, string | undefined][]) {
    if (value === undefined) continue;
    if (!(key in DEFAULT_PATHS)) {
      problems.push(`paths.${String(key)}: unknown path name`);
      continue;
    }
    if (typeof value !== 'string' || !value.startsWith('/')) {
      problems.push(`paths.${key}: must start with /`);
      continue;
    }
    const placeholder = REQUIRED_PLACEHOLDERS[key];
    if (placeholder && !value.includes(placeholder)) {
      problems.push(`paths.${key}: must contain ${placeholder}`);
      continue;
    }
    paths[key] = value;
  }
  if (problems.length) throw new TypeError(`PaymentsClient: invalid paths option: ${problems.join('; ')}`);
  return paths;
}

/** Replaces `{name}` placeholders with URL-encoded values. */
export function fillPath(template: string, params: Record<string, string | number>): string {
  return template.replace(/\{([A-Za-z0-9_]+)\}/g, (whole, name: string) => {
    const value = params[name];
    if (value === undefined) throw new TypeError(`path ${template}: no value for ${whole}`);
    return encodeURIComponent(String(value));
  });
}
