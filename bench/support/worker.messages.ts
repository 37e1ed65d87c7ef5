/** What the parent asks a forked worker: its memory footprint, or to stop. */
export type ParentMessage = { type: 'memory' } | { type: 'stop' };

/** What a forked worker tells its parent. */
export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'finished'; id: string }
  | { type: 'memory'; rss: number; heapUsed: number };
