// `npm run build`, second step: writes dist/workflow-bundle.js and dist/workflow-bundle-traced.js
// from the compiled workflows (run as `node dist/workers/build-workflow-bundle.js` right after tsc).
import { buildWorkflowBundles } from './workflow-bundle';

buildWorkflowBundles()
  .then((built) => {
    for (const { path, bytes } of built)
      console.log(`workflow bundle: ${path} (${(bytes / 1024 / 1024).toFixed(2)} MiB)`);
  })
  .catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
