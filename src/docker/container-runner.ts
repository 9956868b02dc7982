import { describeState } from "./classify-error.ts";
import type { CommandRunner } from "./command-runner.ts";
import { ContainerNotRunningError } from "./errors.ts";
import type { DockerExecutor } from "./executor.ts";

/** A CommandRunner that runs everything in one container through the Docker exec API. */
export function createContainerRunner(executor: DockerExecutor, container: string): CommandRunner {
  return {
    where: `container "${container}"`,
    plan: (argv, options = {}) => ({
      where: `container "${container}" (Docker exec via ${executor.endpoint})`,
      ...(options.user ? { user: options.user } : {}),
      env: options.env ?? {},
      ...(options.workdir ? { workdir: options.workdir } : {}),
      argv: [...argv],
    }),
    run: (argv, options) => executor.exec(container, argv, options),
    listProcesses: () => executor.processes(container),
    async assertAvailable() {
      const info = await executor.inspect(container);
      if (info.state !== "running") throw new ContainerNotRunningError(container, describeState(info.state, info.state));
    },
  };
}
