// Which process of src/config/processes.ts each workload of deploy/k8s runs (by its name).
import type { ProcessKind } from '../../src/config/processes';

export const K8S_PROCESS: Readonly<Record<string, ProcessKind>> = {
  'payflow-worker': 'worker',
  'payflow-webhooks': 'receiver',
  'payflow-codec-server': 'codec',
  'payflow-search-attributes': 'admin',
};
