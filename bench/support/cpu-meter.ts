import { readdirSync, readFileSync } from 'node:fs';

/** CPU milliseconds spent by this process, PostgreSQL's processes and Redis's, over a stretch. */
export interface CpuSpent {
  workerMs: number;
  postgresMs: number;
  redisMs: number;
}

const CLOCK_TICKS_PER_SECOND = 100;

/**
 * Starts measuring CPU time; the returned function reads how much each side spent since. The
 * services' share comes from `/proc/<pid>/stat` (Linux; zero elsewhere), summed over every
 * process of that name, so it includes PostgreSQL's background writers and WAL writer.
 */
export function startCpuMeter(): () => CpuSpent {
  const ownStart = process.cpuUsage();
  const servicesStart = serviceTicks();
  return () => {
    const own = process.cpuUsage(ownStart);
    const services = serviceTicks();
    const msOf = (name: 'postgres' | 'redis-server') =>
      ((services.get(name) ?? 0) - (servicesStart.get(name) ?? 0)) *
      (1000 / CLOCK_TICKS_PER_SECOND);
    return {
      workerMs: (own.user + own.system) / 1000,
      postgresMs: msOf('postgres'),
      redisMs: msOf('redis-server'),
    };
  };
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
