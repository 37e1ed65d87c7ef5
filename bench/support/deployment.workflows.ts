import { envInteger } from './env';
import { chainWorkflow, parkedWorkflow } from './bench.workflows';

/**
 * The workflows of the multi-process benchmarks (scale-out, memory): the parent process (which
 * starts workflows, `worker: false`) and every worker process register the same classes under
 * the same names, with the step count from BENCH_STEPS (default 10), which the parent passes on.
 */
export const DeploymentChainWorkflow = chainWorkflow(
  'DeploymentChainWorkflow',
  envInteger('BENCH_STEPS', 10),
  null,
);
export const DeploymentParkedWorkflow = parkedWorkflow('DeploymentParkedWorkflow');
export const DEPLOYMENT_WORKFLOWS = [DeploymentChainWorkflow, DeploymentParkedWorkflow];
