import { readdirSync, readFileSync } from 'node:fs';
import type { DataSource } from 'typeorm';

/** CPU milliseconds spent by this process, PostgreSQL's processes and Redis's, over a stretch. */
export interface CpuSpent {
  workerMs: number;
  postgresMs: number;
  /** The backends serving the measured pool alone (other clients of the server left out). */
  postgresOwnMs: number;
  redisMs: number;
}

/**
 * The `application_name` the benchmarks' pools connect with, so the CPU meter can tell this
 * process's PostgreSQL backends from those of anything else using the server meanwhile.
 */
export const BENCH_APPLICATION_NAME = `geneva-drive-bench-${process.pid}`;

const CLOCK_TICKS_PER_SECOND = 100;

/**
 * Starts measuring CPU time; the returned function reads how much each side spent since. The
 * services' share comes from `/proc/<pid>/stat` (Linux; zero elsewhere), summed over every
 * process of that name, so it includes PostgreSQL's background writers and WAL writer, and every
 * other client's backends on a shared server. `postgresOwnMs` counts only the backends connected
 * under `applicationName` (default: `dataSource`'s own pool, see `bootEngine`; DBOS Transact's pool
 * has a name of its own, see `launchDbos`): the figure to compare on a busy machine. `dataSource`
 * only reads `pg_stat_activity`, which lists every database of the server.
 */
export async function startCpuMeter(
  dataSource: DataSource,
  applicationName = BENCH_APPLICATION_NAME,
): Promise<() => Promise<CpuSpent>> {
  const ownStart = process.cpuUsage();
  const servicesStart = serviceTicks();
  const backendsStart = backendTicks(await ownBackends(dataSource, applicationName));
  return async () => {
    const own = process.cpuUsage(ownStart);
    const services = serviceTicks();
    const backends = backendTicks(await ownBackends(dataSource, applicationName));
    const msOf = (name: 'postgres' | 'redis-server') =>
      ((services.get(name) ?? 0) - (servicesStart.get(name) ?? 0)) *
      (1000 / CLOCK_TICKS_PER_SECOND);
    // A backend that started during the stretch started from zero ticks.
    let ownTicks = 0;
    for (const [pid, used] of backends) ownTicks += used - (backendsStart.get(pid) ?? 0);
    return {
      workerMs: (own.user + own.system) / 1000,
      postgresMs: msOf('postgres'),
      postgresOwnMs: ownTicks * (1000 / CLOCK_TICKS_PER_SECOND),
      redisMs: msOf('redis-server'),
    };
  };
}

/** Process ids of the backends connected under `applicationName`. */
export async function ownBackends(
  dataSource: DataSource,
  applicationName: string,
): Promise<string[]> {
  const rows = await dataSource.query<Array<{ pid: number }>>(
    'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
    [applicationName],
  );
  return rows.map((row) => String(row.pid));
}

/** utime + stime ticks of each of `pids` that is still alive. */
function backendTicks(pids: string[]): Map<string, number> {
  const ticks = new Map<string, number>();
  for (const pid of pids) {
    const used = processTicks(pid);
    if (used !== null) ticks.set(pid, used);
  }
  return ticks;
}

function processTicks(pid: string): number | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null; // exited meanwhile, or not Linux
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of stat (utime, stime) are at 11 and 12 after the command name.
  return Number(fields[11]) + Number(fields[12]);
}

/** utime + stime ticks per command name, over every live process. */
function serviceTicks(): Map<string, number> {
  const ticks = new Map<string, number>();
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return ticks;
  }
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat (utime, stime) are at 11 and 12 after the command name.
    const used = Number(fields[11]) + Number(fields[12]);
    ticks.set(name, (ticks.get(name) ?? 0) + used);
  }
  return ticks;
}
