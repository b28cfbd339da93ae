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
  const reading = new ConnectionReading(env);
  reading.checkVariables();
  const profile = reading.loadProfile();
  const address = profile.address ?? DEFAULT_TEMPORAL_ADDRESS;
  if (!/^[^:\s]+:\d+$/.test(address))
    reading.issue(reading.origin(['TEMPORAL_ADDRESS'], 'address'), 'must be host:port');
  const namespace = profile.namespace ?? DEFAULT_TEMPORAL_NAMESPACE;
  if (namespace.trim() === '') reading.issue(reading.origin(['TEMPORAL_NAMESPACE'], 'namespace'), 'must not be empty');
  const apiKey = profile.apiKey !== undefined && profile.apiKey !== '' ? profile.apiKey : undefined;
  const t = profile.tls;
  const disabled = t?.disabled === true;
  const tlsOn = t !== undefined ? !disabled : apiKey !== undefined;
  if (t && disabled && (t.serverCACert || t.clientCert || t.clientKey || t.serverName))
    reading.issue(
      reading.origin(TLS_VARIABLES.disabled, 'tls.disabled'),
      'is false but TLS files or a server name are set; remove one or the other',
    );
  const tls = tlsOn ? reading.tlsSettings(t) : undefined;
  if (production) reading.checkProduction(disabled, tlsOn);
  const grpcMeta = profile.grpcMeta && Object.keys(profile.grpcMeta).length > 0 ? profile.grpcMeta : undefined;
  return {
    settings: {
      address,
      namespace,
      ...(tls ? { tls } : {}),
      ...(apiKey ? { apiKey } : {}),
      ...(grpcMeta ? { grpcMeta } : {}),
      ...(reading.usedFile ? { profile: reading.profileName } : {}),
    },
    issues: reading.issues,
  };
}

/** The variables (ours and envconfig's) that may set each TLS value. */
const TLS_VARIABLES = {
  disabled: ['TEMPORAL_TLS'],
  ca: ['TEMPORAL_TLS_CA_PATH', 'TEMPORAL_TLS_SERVER_CA_CERT_PATH', 'TEMPORAL_TLS_SERVER_CA_CERT_DATA'],
  cert: ['TEMPORAL_TLS_CERT_PATH', 'TEMPORAL_TLS_CLIENT_CERT_PATH', 'TEMPORAL_TLS_CLIENT_CERT_DATA'],
  key: ['TEMPORAL_TLS_KEY_PATH', 'TEMPORAL_TLS_CLIENT_KEY_PATH', 'TEMPORAL_TLS_CLIENT_KEY_DATA'],
  serverName: ['TEMPORAL_TLS_SERVER_NAME'],
} as const;

type TlsFile = 'ca' | 'cert' | 'key';
type ProfileTls = ClientConfigProfile['tls'];

/** One reading of the environment and the profile file: the issues found, and where each value came from. */
class ConnectionReading {
  readonly issues: ConfigIssue[] = [];
  /** Our aliases become envconfig's names. */
  private readonly sdkEnv: Record<string, string>;
  private readonly fileVariable: string;
  readonly profileName: string;
  usedFile = false;

  constructor(private readonly env: Record<string, string | undefined>) {
    this.sdkEnv = Object.fromEntries(
      Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''),
    );
    this.fileVariable = this.set('TEMPORAL_CONFIG_FILE') ? 'TEMPORAL_CONFIG_FILE' : 'temporal.toml';
    this.profileName = env.TEMPORAL_PROFILE || 'default';
  }

  set(name: string): boolean {
    return this.env[name] !== undefined && this.env[name] !== '';
  }

  issue(variable: string, message: string): void {
    this.issues.push({ variable, message });
  }

  /** Our aliases (both set to different values: refused, naming ours) and the boolean variables. */
  checkVariables(): void {
    for (const [ours, standard] of Object.entries(TEMPORAL_TLS_ALIASES)) {
      if (!this.set(ours)) continue;
      if (this.set(standard) && this.env[standard] !== this.env[ours])
        this.issue(ours, `and ${standard} name different files; set one of them`);
      this.sdkEnv[standard] = this.env[ours] as string;
    }
    for (const name of ['TEMPORAL_TLS', 'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION']) {
      if (this.set(name) && !BOOL_VALUES.includes(this.env[name] as string))
        this.issue(name, 'must be true, false, 1 or 0');
    }
    if (['true', '1'].includes(this.env.TEMPORAL_TLS_DISABLE_HOST_VERIFICATION ?? ''))
      this.issue(
        'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION',
        'is not supported (the TypeScript SDK always verifies the server); set TEMPORAL_TLS_SERVER_NAME to the name in the certificate instead',
      );
  }

  /** The profile as envconfig merges it; the file alone is read too, to tell where each value came from. */
  loadProfile(): ClientConfigProfile {
    let disableFile = false;
    if (this.set('TEMPORAL_CONFIG_FILE') && !readable(this.env.TEMPORAL_CONFIG_FILE as string)) {
      this.issue('TEMPORAL_CONFIG_FILE', 'must name a readable TOML file');
      disableFile = true;
    }
    const options = {
      overrideEnvVars: this.sdkEnv,
      configFileStrict: true,
      ...(this.set('TEMPORAL_PROFILE') ? { profile: this.env.TEMPORAL_PROFILE } : {}),
    };
    let profile: ClientConfigProfile = {};
    try {
      profile = loadClientConfigProfile({ ...options, disableFile });
      if (!disableFile)
        this.usedFile = Object.keys(loadClientConfigProfile({ ...options, disableEnv: true })).length > 0;
    } catch (err) {
      this.issues.push(loadIssue(err, this.fileVariable));
    }
    return profile;
  }

  /** The variable that set a value, else its key in the profile file. */
  origin(variables: readonly string[], tomlKey: string): string {
    return (
      variables.find((name) => this.set(name)) ??
      (this.usedFile ? `${this.fileVariable} [profile.${this.profileName}] ${tomlKey}` : variables[0])
    );
  }

  private sourceOf(what: TlsFile, source: ConfigDataSource | undefined): string {
    const base = what === 'ca' ? 'tls.server_ca_cert' : what === 'cert' ? 'tls.client_cert' : 'tls.client_key';
    return this.origin(TLS_VARIABLES[what], `${base}_${source && 'data' in source ? 'data' : 'path'}`);
  }

  tlsSettings(t: ProfileTls): TemporalTlsSettings {
    const tls: TemporalTlsSettings = {};
    const sources: NonNullable<TemporalTlsSettings['sources']> = {};
    const files: [TlsFile, ConfigDataSource | undefined][] = [
      ['ca', t?.serverCACert],
      ['cert', t?.clientCert],
      ['key', t?.clientKey],
    ];
    for (const [what, source] of files) {
      if (!source) continue;
      sources[what] = this.sourceOf(what, source);
      Object.assign(tls, this.tlsFile(what, source, sources[what]));
    }
    if (Boolean(t?.clientCert) !== Boolean(t?.clientKey))
      this.issue(this.missingHalf(t), 'the mTLS client certificate and key must be set together');
    if (t?.serverName) tls.serverName = t.serverName;
    if (Object.keys(sources).length > 0) tls.sources = sources;
    return tls;
  }

  /** A CA, certificate or key: a readable file's path, or PEM text. */
  private tlsFile(what: TlsFile, source: ConfigDataSource, from: string): Partial<TemporalTlsSettings> {
    if ('path' in source) {
      if (!readable(source.path)) this.issue(from, 'must name a readable PEM file');
      return { [`${what}Path`]: source.path };
    }
    const pem = typeof source.data === 'string' ? source.data : Buffer.from(source.data).toString('utf8');
    if (!pem.includes('-----BEGIN ')) this.issue(from, 'must be PEM text (-----BEGIN …)');
    return { [`${what}Data`]: pem };
  }

  /** The missing half of an mTLS pair, named in the family of the half that is there. */
  private missingHalf(t: ProfileTls): string {
    const present = t?.clientCert ? this.sourceOf('cert', t.clientCert) : this.sourceOf('key', t?.clientKey);
    if (present.startsWith(this.fileVariable))
      return `${this.fileVariable} [profile.${this.profileName}] ${t?.clientCert ? 'tls.client_key_path' : 'tls.client_cert_path'}`;
    if (present.startsWith('TEMPORAL_TLS_CLIENT_'))
      return t?.clientCert ? 'TEMPORAL_TLS_CLIENT_KEY_PATH' : 'TEMPORAL_TLS_CLIENT_CERT_PATH';
    return t?.clientCert ? 'TEMPORAL_TLS_KEY_PATH' : 'TEMPORAL_TLS_CERT_PATH';
  }

  checkProduction(disabled: boolean, tlsOn: boolean): void {
    if (disabled)
      this.issue(
        this.origin(TLS_VARIABLES.disabled, 'tls.disabled'),
        'must not be false in production (the Temporal connection must use TLS)',
      );
    else if (!tlsOn)
      this.issue(
        'TEMPORAL_TLS',
        'production needs a protected Temporal connection: set TEMPORAL_TLS=true (TEMPORAL_TLS_CA_PATH for a private CA), TEMPORAL_TLS_CERT_PATH with TEMPORAL_TLS_KEY_PATH (mTLS), or TEMPORAL_API_KEY — or a TEMPORAL_CONFIG_FILE profile with a [tls] section or an api_key',
      );
  }
}
