// The Temporal connection's settings (address, namespace, TLS, API key, gRPC metadata), read through
// @temporalio/envconfig: a TOML profile (TEMPORAL_CONFIG_FILE, else the user's
// ~/.config/temporalio/temporal.toml; TEMPORAL_PROFILE, else "default") with the standard TEMPORAL_*
// variables on top. The same worker then runs against the dev server, a self-hosted cluster with mTLS,
// or Temporal Cloud with an API key, by configuration only.
//
// The project's own names keep working: TEMPORAL_TLS_CA_PATH, TEMPORAL_TLS_CERT_PATH and
// TEMPORAL_TLS_KEY_PATH are aliases of envconfig's TEMPORAL_TLS_SERVER_CA_CERT_PATH,
// TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH (both set to different files is refused).
//
// Every problem is reported with where the value came from — the variable, or the profile key in the
// file (`TEMPORAL_CONFIG_FILE [profile.cloud] tls.client_key_path`) — and never with the value itself
// (API keys, key paths and PEM data stay out of messages).
import { accessSync, constants as fsConstants } from 'node:fs';
import { z } from 'zod';
import { loadClientConfigProfile, type ClientConfigProfile, type ConfigDataSource } from '@temporalio/envconfig';

/** TLS to the Temporal server. Present means TLS is on; every field is optional (system CAs, no client cert). */
export interface TemporalTlsSettings {
  /** PEM file of the CA that signed the server's certificate (TEMPORAL_TLS_CA_PATH). */
  caPath?: string;
  /** PEM client certificate for mTLS (TEMPORAL_TLS_CERT_PATH); always together with keyPath. */
  certPath?: string;
  /** PEM private key for mTLS (TEMPORAL_TLS_KEY_PATH). Never log it. */
  keyPath?: string;
  /** Overrides the name checked against the server's certificate (TEMPORAL_TLS_SERVER_NAME). */
  serverName?: string;
  /** PEM text instead of a file (a profile's *_data, TEMPORAL_TLS_*_DATA). Never log them. */
  caData?: string;
  certData?: string;
  keyData?: string;
  /** Where the CA, certificate and key came from (a variable or a profile key), for error messages. */
  sources?: Partial<Record<'ca' | 'cert' | 'key', string>>;
}

export interface TemporalConnectionSettings {
  address: string;
  /** Undefined: plaintext, unless apiKey is set (the SDK then turns TLS on). */
  tls?: TemporalTlsSettings;
  /** Sent as `Authorization: Bearer …` (TEMPORAL_API_KEY). Never log it. */
  apiKey?: string;
  /** Extra gRPC metadata (a profile's grpc_meta, TEMPORAL_GRPC_META_*). Never log the values. */
  grpcMeta?: Record<string, string>;
}

export interface ConfigIssue {
  variable: string;
  message: string;
}

/**
 * The variables of the connection, known to config's zod schema (so compose and manifests may set them);
 * their values are checked together by resolveTemporalConnection, after the profile file is merged in.
 */
export const temporalEnvShape = {
  TEMPORAL_CONFIG_FILE: z.string().optional(),
  TEMPORAL_PROFILE: z.string().optional(),
  TEMPORAL_ADDRESS: z.string().optional(),
  TEMPORAL_NAMESPACE: z.string().optional(),
  TEMPORAL_API_KEY: z.string().optional(),
  TEMPORAL_TLS: z.string().optional(),
  // Ours (kept) and envconfig's names for the same files.
  TEMPORAL_TLS_CA_PATH: z.string().optional(),
  TEMPORAL_TLS_CERT_PATH: z.string().optional(),
  TEMPORAL_TLS_KEY_PATH: z.string().optional(),
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: z.string().optional(),
  TEMPORAL_TLS_CLIENT_CERT_PATH: z.string().optional(),
  TEMPORAL_TLS_CLIENT_KEY_PATH: z.string().optional(),
  TEMPORAL_TLS_SERVER_CA_CERT_DATA: z.string().optional(),
  TEMPORAL_TLS_CLIENT_CERT_DATA: z.string().optional(),
  TEMPORAL_TLS_CLIENT_KEY_DATA: z.string().optional(),
  TEMPORAL_TLS_SERVER_NAME: z.string().optional(),
  TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: z.string().optional(),
};

export const DEFAULT_TEMPORAL_ADDRESS = '127.0.0.1:7233';
export const DEFAULT_TEMPORAL_NAMESPACE = 'default';

/** Our variable → envconfig's standard variable of the same setting. */
export const TEMPORAL_TLS_ALIASES = {
  TEMPORAL_TLS_CA_PATH: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
  TEMPORAL_TLS_CERT_PATH: 'TEMPORAL_TLS_CLIENT_CERT_PATH',
  TEMPORAL_TLS_KEY_PATH: 'TEMPORAL_TLS_CLIENT_KEY_PATH',
} as const;

export interface ResolvedTemporalConnection extends TemporalConnectionSettings {
  namespace: string;
  /** The profile read from a config file, when one was (its name). */
  profile?: string;
}

const BOOL_VALUES = ['true', 'false', '1', '0'];

function readable(path: string): boolean {
  try {
    accessSync(path, fsConstants.R_OK);
    return true;
  } catch {
    return false;
  }
}

/** What envconfig reported, as a named issue that echoes no value. */
function loadIssue(err: unknown, fileLabel: string): ConfigIssue {
  const e = err as { message?: string; line?: number; column?: number; name?: string };
  const message = typeof e?.message === 'string' ? e.message : '';
  const profileMissing = /^Profile '.*' not found/.exec(message);
  if (profileMissing) return { variable: 'TEMPORAL_PROFILE', message: 'names a profile the config file does not have' };
  if (typeof e?.line === 'number')
    return {
      variable: fileLabel,
      message: `is not valid TOML (line ${e.line}${typeof e.column === 'number' ? `, column ${e.column}` : ''})`,
    };
  // envconfig's own validation messages name keys, never values.
  if (/^Validation error: /.test(message))
    return { variable: fileLabel, message: message.replace(/^Validation error: /, '') };
  const both = /^Cannot specify both (\w+)_path and \w+_data/.exec(message);
  if (both)
    return {
      variable: fileLabel,
      message: `tls.${both[1]}: a path and PEM data are both given (file and environment together); keep one`,
    };
  return { variable: fileLabel, message: 'could not be read as a Temporal client config file' };
}

/**
 * Resolves the Temporal connection from `env` (the process environment, empty strings removed).
 * Returns the settings and the problems found; `production` adds the rule that the connection must
 * be protected (TLS, or an API key over TLS).
 */
export function resolveTemporalConnection(
  env: Record<string, string | undefined>,
  production: boolean,
): { settings: ResolvedTemporalConnection; issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  const set = (name: string) => env[name] !== undefined && env[name] !== '';

  // Our aliases become envconfig's names (both set to different values: refused, naming ours).
  const sdkEnv: Record<string, string> = Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''),
  );
  for (const [ours, standard] of Object.entries(TEMPORAL_TLS_ALIASES)) {
    if (!set(ours)) continue;
    if (set(standard) && env[standard] !== env[ours]) {
      issues.push({ variable: ours, message: `and ${standard} name different files; set one of them` });
    }
    sdkEnv[standard] = env[ours] as string;
  }
  for (const name of ['TEMPORAL_TLS', 'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION']) {
    if (set(name) && !BOOL_VALUES.includes(env[name] as string))
      issues.push({ variable: name, message: 'must be true, false, 1 or 0' });
  }
  if (
    set('TEMPORAL_TLS_DISABLE_HOST_VERIFICATION') &&
    ['true', '1'].includes(env.TEMPORAL_TLS_DISABLE_HOST_VERIFICATION as string)
  ) {
    issues.push({
      variable: 'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION',
      message:
        'is not supported (the TypeScript SDK always verifies the server); set TEMPORAL_TLS_SERVER_NAME to the name in the certificate instead',
    });
  }

  const fileVariable = set('TEMPORAL_CONFIG_FILE') ? 'TEMPORAL_CONFIG_FILE' : 'temporal.toml';
  let disableFile = false;
  if (set('TEMPORAL_CONFIG_FILE') && !readable(env.TEMPORAL_CONFIG_FILE as string)) {
    issues.push({ variable: 'TEMPORAL_CONFIG_FILE', message: 'must name a readable TOML file' });
    disableFile = true;
  }

  let profile: ClientConfigProfile = {};
  let fromFile: ClientConfigProfile = {};
  try {
    profile = loadClientConfigProfile({
      overrideEnvVars: sdkEnv,
      configFileStrict: true,
      disableFile,
      ...(set('TEMPORAL_PROFILE') ? { profile: env.TEMPORAL_PROFILE } : {}),
    });
    // The file alone, to tell where each value came from.
    if (!disableFile)
      fromFile = loadClientConfigProfile({
        overrideEnvVars: sdkEnv,
        configFileStrict: true,
        disableEnv: true,
        ...(set('TEMPORAL_PROFILE') ? { profile: env.TEMPORAL_PROFILE } : {}),
      });
  } catch (err) {
    issues.push(loadIssue(err, fileVariable));
  }
  const profileName = env.TEMPORAL_PROFILE || 'default';
  const usedFile = Object.keys(fromFile).length > 0;
  /** The variable that set a value, else its key in the profile file. */
  const origin = (variables: readonly string[], tomlKey: string): string =>
    variables.find(set) ?? (usedFile ? `${fileVariable} [profile.${profileName}] ${tomlKey}` : variables[0]);

  const address = profile.address ?? DEFAULT_TEMPORAL_ADDRESS;
  if (!/^[^:\s]+:\d+$/.test(address))
    issues.push({ variable: origin(['TEMPORAL_ADDRESS'], 'address'), message: 'must be host:port' });
  const namespace = profile.namespace ?? DEFAULT_TEMPORAL_NAMESPACE;
  if (namespace.trim() === '')
    issues.push({ variable: origin(['TEMPORAL_NAMESPACE'], 'namespace'), message: 'must not be empty' });
  const apiKey = profile.apiKey !== undefined && profile.apiKey !== '' ? profile.apiKey : undefined;

  const t = profile.tls;
  const names = {
    disabled: ['TEMPORAL_TLS'],
    ca: ['TEMPORAL_TLS_CA_PATH', 'TEMPORAL_TLS_SERVER_CA_CERT_PATH', 'TEMPORAL_TLS_SERVER_CA_CERT_DATA'],
    cert: ['TEMPORAL_TLS_CERT_PATH', 'TEMPORAL_TLS_CLIENT_CERT_PATH', 'TEMPORAL_TLS_CLIENT_CERT_DATA'],
    key: ['TEMPORAL_TLS_KEY_PATH', 'TEMPORAL_TLS_CLIENT_KEY_PATH', 'TEMPORAL_TLS_CLIENT_KEY_DATA'],
    serverName: ['TEMPORAL_TLS_SERVER_NAME'],
  } as const;
  const tomlKey = (what: 'ca' | 'cert' | 'key', source: ConfigDataSource | undefined) => {
    const base = what === 'ca' ? 'tls.server_ca_cert' : what === 'cert' ? 'tls.client_cert' : 'tls.client_key';
    return `${base}_${source && 'data' in source ? 'data' : 'path'}`;
  };
  const sourceOf = (what: 'ca' | 'cert' | 'key', source: ConfigDataSource | undefined) =>
    origin(names[what], tomlKey(what, source));

  const disabled = t?.disabled === true;
  const tlsOn = t !== undefined ? !disabled : apiKey !== undefined;
  let tls: TemporalTlsSettings | undefined;
  if (t && disabled && (t.serverCACert || t.clientCert || t.clientKey || t.serverName)) {
    issues.push({
      variable: origin(names.disabled, 'tls.disabled'),
      message: 'is false but TLS files or a server name are set; remove one or the other',
    });
  }
  if (tlsOn) {
    tls = {};
    const sources: NonNullable<TemporalTlsSettings['sources']> = {};
    const take = (what: 'ca' | 'cert' | 'key', source: ConfigDataSource | undefined) => {
      if (!source) return;
      const from = sourceOf(what, source);
      sources[what] = from;
      if ('path' in source) {
        if (!readable(source.path)) issues.push({ variable: from, message: 'must name a readable PEM file' });
        if (what === 'ca') tls!.caPath = source.path;
        else if (what === 'cert') tls!.certPath = source.path;
        else tls!.keyPath = source.path;
      } else {
        const pem = typeof source.data === 'string' ? source.data : Buffer.from(source.data).toString('utf8');
        if (!pem.includes('-----BEGIN ')) issues.push({ variable: from, message: 'must be PEM text (-----BEGIN …)' });
        if (what === 'ca') tls!.caData = pem;
        else if (what === 'cert') tls!.certData = pem;
        else tls!.keyData = pem;
      }
    };
    take('ca', t?.serverCACert);
    take('cert', t?.clientCert);
    take('key', t?.clientKey);
    if (Boolean(t?.clientCert) !== Boolean(t?.clientKey)) {
      // Name the missing half in the family of the half that is there.
      const present = t?.clientCert ? sourceOf('cert', t.clientCert) : sourceOf('key', t?.clientKey);
      const missing = present.startsWith(fileVariable)
        ? `${fileVariable} [profile.${profileName}] ${t?.clientCert ? 'tls.client_key_path' : 'tls.client_cert_path'}`
        : present.startsWith('TEMPORAL_TLS_CLIENT_')
          ? t?.clientCert
            ? 'TEMPORAL_TLS_CLIENT_KEY_PATH'
            : 'TEMPORAL_TLS_CLIENT_CERT_PATH'
          : t?.clientCert
            ? 'TEMPORAL_TLS_KEY_PATH'
            : 'TEMPORAL_TLS_CERT_PATH';
      issues.push({ variable: missing, message: 'the mTLS client certificate and key must be set together' });
    }
    if (t?.serverName) tls.serverName = t.serverName;
    if (Object.keys(sources).length > 0) tls.sources = sources;
  }

  if (production) {
    if (disabled) {
      issues.push({
        variable: origin(names.disabled, 'tls.disabled'),
        message: 'must not be false in production (the Temporal connection must use TLS)',
      });
    } else if (!tlsOn) {
      issues.push({
        variable: 'TEMPORAL_TLS',
        message:
          'production needs a protected Temporal connection: set TEMPORAL_TLS=true (TEMPORAL_TLS_CA_PATH for a private CA), TEMPORAL_TLS_CERT_PATH with TEMPORAL_TLS_KEY_PATH (mTLS), or TEMPORAL_API_KEY — or a TEMPORAL_CONFIG_FILE profile with a [tls] section or an api_key',
      });
    }
  }

  const grpcMeta = profile.grpcMeta && Object.keys(profile.grpcMeta).length > 0 ? profile.grpcMeta : undefined;
  return {
    settings: {
      address,
      namespace,
      ...(tls ? { tls } : {}),
      ...(apiKey ? { apiKey } : {}),
      ...(grpcMeta ? { grpcMeta } : {}),
      ...(usedFile ? { profile: profileName } : {}),
    },
    issues,
  };
}
