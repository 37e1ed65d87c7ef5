import type { DataSource } from 'typeorm';

/**
 * Resolves once a backend of the server waits for a lock `pid` holds: PostgreSQL reports a lock
 * wait only in its activity view, so the view is read until it shows one (at most 5 s).
 */
export async function untilLockWaitOn(observer: DataSource, pid: number): Promise<void> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const rows = await observer.query<Array<{ n: number }>>(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))',
      [pid],
    );
    if (rows[0].n > 0) return;
    if (Date.now() > deadline) throw new Error(`No backend waited for a lock of backend ${pid}.`);
  }
}
