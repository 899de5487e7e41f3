/**
 * npm run capacity -- --messages-per-second N … (cli/capacity/run-capacity.ts; docs/capacity.md): every limit
 * on a webhook's path against an expected peak, each lane's queue, the cost, and what to raise.
 */
import { runCapacity } from './run-capacity.ts';

process.exitCode = await runCapacity(process.argv.slice(2), process);
