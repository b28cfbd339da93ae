// The local cluster's mTLS material, made once per cluster directory with the machine's `openssl`
// (node:crypto makes keys but cannot sign X.509 certificates): a CA, the frontend's server
// certificate (localhost / 127.0.0.1), a client certificate for our processes and one for the
// server's own system worker. Keys are EC P-256, readable by the owner only.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ClusterCerts {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  systemWorkerCert: string;
  systemWorkerKey: string;
  /** The name the frontend's certificate carries; clients check it. */
  serverName: string;
}

export const CLUSTER_SERVER_NAME = 'localhost';
/** Long enough for a developer's cluster directory; the CA is local to it and never trusted elsewhere. */
const VALID_DAYS = '825';

function openssl(args: string[]): void {
  try {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: Buffer };
    if (e.code === 'ENOENT') throw new Error('openssl is not on PATH: the cluster needs it to make its certificates');
    throw new Error(`openssl ${args[0]} failed: ${e.stderr?.toString().trim() ?? e.message}`);
  }
}

function newKey(path: string): void {
  openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', path]);
  chmodSync(path, 0o600);
}

/** Signs a leaf certificate with the CA; `usage` is its extendedKeyUsage list. */
function leaf(dir: string, name: string, subject: string, usage: string, san?: string): void {
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const ext = join(dir, `${name}.ext`);
  newKey(key);
  openssl(['req', '-new', '-key', key, '-subj', subject, '-out', csr]);
  writeFileSync(
    ext,
    [
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      `extendedKeyUsage=${usage}`,
      ...(san ? [`subjectAltName=${san}`] : []),
    ].join('\n') + '\n',
  );
  openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    join(dir, 'ca.pem'),
    '-CAkey',
    join(dir, 'ca.key'),
    '-CAcreateserial',
    '-days',
    VALID_DAYS,
    '-sha256',
    '-extfile',
    ext,
    '-out',
    join(dir, `${name}.pem`),
  ]);
}

/** The certificates under `dir`, made on first use (existing ones are kept: clients already trust that CA). */
export function ensureClusterCerts(dir: string): ClusterCerts {
  const certs: ClusterCerts = {
    dir,
    caCert: join(dir, 'ca.pem'),
    serverCert: join(dir, 'frontend.pem'),
    serverKey: join(dir, 'frontend.key'),
    clientCert: join(dir, 'client.pem'),
    clientKey: join(dir, 'client.key'),
    systemWorkerCert: join(dir, 'system-worker.pem'),
    systemWorkerKey: join(dir, 'system-worker.key'),
    serverName: CLUSTER_SERVER_NAME,
  };
  if ([certs.caCert, certs.serverCert, certs.clientCert, certs.systemWorkerCert].every((p) => existsSync(p)))
    return certs;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  newKey(join(dir, 'ca.key'));
  openssl([
    'req',
    '-x509',
    '-new',
    '-key',
    join(dir, 'ca.key'),
    '-subj',
    '/CN=payflow local cluster CA',
    '-days',
    VALID_DAYS,
    '-sha256',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
    '-out',
    certs.caCert,
  ]);
  // The frontend's certificate is also its client certificate when another service calls it.
  leaf(
    dir,
    'frontend',
    `/CN=${CLUSTER_SERVER_NAME}`,
    'serverAuth,clientAuth',
    `DNS:${CLUSTER_SERVER_NAME},IP:127.0.0.1`,
  );
  leaf(dir, 'client', '/CN=payflow', 'clientAuth');
  leaf(dir, 'system-worker', '/CN=temporal-system-worker', 'clientAuth');
  return certs;
}
