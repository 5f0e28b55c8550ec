/**
 * The proxy in this process between a scripted ext_proc server (`helpers.ts`) and a scripted worker (raw TCP,
 * `scripted-worker.ts`), for the fuzz targets that generate what the proxy is answered: what a worker answers, what
 * ext_proc answers. Plus the decoy, an address only clients name. The ext_proc script defaults to routing every
 * request to the worker.
 */
import { startScriptedRoute } from '../edge-harness.js';
import type { ScriptedExtProc } from '../helpers.js';
import type { InProcessTestProxy } from '../proxy.js';
import { Decoy } from './decoy.js';
import { ScriptedWorker } from './scripted-worker.js';

export interface ScriptedStack {
  readonly extproc: ScriptedExtProc;
  readonly worker: ScriptedWorker;
  readonly proxy: InProcessTestProxy;
  readonly decoy: Decoy;
  close(): Promise<void>;
}

export async function startScriptedStack(proxyArgs: readonly string[] = []): Promise<ScriptedStack> {
  const decoy = await Decoy.start();
  const worker = await ScriptedWorker.start();
  const route = await startScriptedRoute(worker.address, [
    '--extproc-message-timeout-ms', '3000', '--connect-timeout-ms', '1000', '--route-timeout-ms', '3000', ...proxyArgs,
  ]);
  return {
    extproc: route.extproc,
    worker,
    proxy: route.proxy,
    decoy,
    async close() {
      await route.close();
      await worker.close();
      await decoy.close();
    },
  };
}
