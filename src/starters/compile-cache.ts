// Each CLI command is a process of its own. V8's compile cache (Node 22.1 and later, kept in the
// OS temp folder) spares each start compiling the same modules again: about a fifth of a command's
// CPU. Imported first by ./cli.ts so that it is on before the other modules load; where it cannot
// be (no Node support, an unwritable folder) the CLI runs as before.
import * as nodeModule from 'node:module';

(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();
