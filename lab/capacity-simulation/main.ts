/** npm run capacity-simulation -- … (./capacity-simulation-command.ts; docs/capacity.md). */
import { runCapacitySimulation } from './capacity-simulation-command.ts';

process.exitCode = await runCapacitySimulation(process.argv.slice(2), process);
