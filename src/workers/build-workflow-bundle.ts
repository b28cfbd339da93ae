// `npm run build`, second step: writes dist/workflow-bundle.js from the compiled workflows
// (run as `node dist/workers/build-workflow-bundle.js` right after tsc).
import { buildWorkflowBundle } from './workflow-bundle';

buildWorkflowBundle()
  .then(({ path, bytes }) => console.log(`workflow bundle: ${path} (${(bytes / 1024 / 1024).toFixed(2)} MiB)`))
  .catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
