import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { OUT_OF_TIME, raise } from '../../errors/index.js';

/**
 * How a statement's rows come back: every row as an array (`rows`), or the first column of
 * the first row (`value`, a count).
 */
export type ReadShape = 'rows' | 'value';

/** Threads reading the catalog: two, the cores of the machines this is measured on (docs/performance.md). */
export const READ_THREADS = 2;

/**
 * The longest one statement may run on a reading thread. Past it the thread is stopped (its
 * read-only connection goes with it; WAL readers hold no lock a writer waits on) and replaced,
 * and the request is answered SDC_OUT_OF_TIME (503, Retry-After). Queries and coverage are
 * read a page (1000 rows) per statement, so only a page or a count that scans this long is
 * stopped: a stream of any length holds a thread for one page at a time (docs/performance.md,
 * "time budget").
 */
export const STATEMENT_BUDGET_MS = 15_000;

/** Seconds a client told SDC_OUT_OF_TIME waits before asking again. */
const RETRY_AFTER_S = '30';

/**
 * The thread's code (plain JavaScript, evaluated by the Worker, so that it runs the same from
 * the sources and from dist/): a read-only connection to the catalog file, statements kept per
 * SQL text, one statement at a time.
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
// Linux applies a priority set for "this process" (pid 0) to the calling thread only: the
// reading threads yield the CPU to the event loop, which answers health checks and point
// reads, whenever both want it. Elsewhere it would lower the whole process, so not there.
if (process.platform === 'linux') require('node:os').setPriority(0, 10);
const Database = require(workerData.driver);
const db = new Database(workerData.file, { readonly: true });
db.pragma('busy_timeout = 5000');
db.pragma('cache_size = -65536');
const statements = new Map();
parentPort.on('message', ({ text, params, shape }) => {
  try {
    let statement = statements.get(text);
    if (!statement) {
      if (statements.size >= 256) statements.delete(statements.keys().next().value);
      statement = db.prepare(text);
      statements.set(text, statement);
    }
    const result = shape === 'value' ? statement.pluck().get(...params) : statement.raw().all(...params);
    parentPort.postMessage({ result });
  } catch (err) {
    parentPort.postMessage({ error: { message: String(err && err.message), code: err && err.code } });
  }
});`;

interface Task {
  /** How many statements the request had run before this one: the lower, the sooner it runs. */
  readonly turn: number;
  readonly text: string;
  readonly params: readonly unknown[];
  readonly shape: ReadShape;
  readonly resolve: (result: unknown) => void;
  readonly reject: (err: unknown) => void;
}

interface Thread {
  readonly worker: Worker;
  task?: Task;
  timer?: NodeJS.Timeout;
  /** Being stopped (over its budget): it takes nothing more. */
  stopping?: boolean;
}

/**
 * A few threads, each with its own read-only connection, that run the catalog's reads that can
 * take long (query pages, counts, coverage) off the event loop: while one runs, the server
 * goes on answering /healthz, uploads and downloads (docs/performance.md). Statements wait
 * their turn in order when every thread is busy. Point reads (a path, a key) stay on the event
 * loop's own connection, where they cost less than a message to a thread.
 */
export class SqliteReadPool {
  private readonly idle: Thread[] = [];
  private readonly waiting: Task[] = [];
  private readonly threads = new Set<Thread>();
  /** Threads told to stop that are still finishing their statement (see STATEMENT_BUDGET_MS). */
  private readonly stopping = new Set<Thread>();
  private closed = false;
  private readonly driver = createRequire(import.meta.url).resolve('better-sqlite3');

  constructor(
    private readonly file: string,
    private readonly size = READ_THREADS,
    private readonly budgetMs = STATEMENT_BUDGET_MS,
  ) {}

  /**
   * Runs one statement (`?` placeholders) on a thread; its rows as arrays, or its one value.
   * `turn`: how many statements the same request has run before (a stream's page number).
   * Waiting statements run lowest turn first, in order of arrival within a turn: a request's
   * first statement never waits behind the 500th page of a stream of everything.
   */
  run(text: string, params: readonly unknown[], shape: ReadShape = 'rows', turn = 0): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new Error('the catalog is closed'));
      const task = { turn, text, params, shape, resolve, reject };
      let at = this.waiting.length;
      while (at > 0 && this.waiting[at - 1]!.turn > turn) at--;
      this.waiting.splice(at, 0, task);
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.waiting.length > 0) {
      const thread = this.idle.pop() ?? (this.threads.size < this.size && this.stopping.size < this.size ? this.spawn() : undefined);
      if (!thread) return;
      this.start(thread, this.waiting.shift()!);
    }
  }

  private spawn(): Thread {
    const worker = new Worker(THREAD_SOURCE, { eval: true, workerData: { driver: this.driver, file: this.file } });
    const thread: Thread = { worker };
    this.threads.add(thread);
    worker.on('message', (message: { result?: unknown; error?: { message: string; code?: string } }) => {
      const task = this.finish(thread);
      if (message.error) task?.reject(Object.assign(new Error(message.error.message), { code: message.error.code }));
      else task?.resolve(message.result);
      if (!thread.stopping) this.release(thread);
    });
    // A thread that fails (its connection could not open, it ran out of memory) fails its
    // statement and is replaced by the next one needed; nothing ends the process.
    worker.on('error', (err) => this.finish(thread)?.reject(err));
    worker.on('exit', () => {
      this.finish(thread)?.reject(new Error('the catalog reading thread stopped'));
      this.threads.delete(thread);
      this.stopping.delete(thread);
      const at = this.idle.indexOf(thread);
      if (at >= 0) this.idle.splice(at, 1);
      if (!this.closed) this.dispatch();
    });
    return thread;
  }

  private start(thread: Thread, task: Task): void {
    thread.task = task;
    thread.worker.ref();
    thread.timer = setTimeout(() => {
      const over = this.finish(thread);
      over?.reject(raise(OUT_OF_TIME, [], { headers: { 'Retry-After': RETRY_AFTER_S } }));
      // A thread inside SQLite stops only once its statement returns (better-sqlite3 cannot
      // interrupt one): another takes its place meanwhile, up to as many stopping as running.
      thread.stopping = true;
      this.threads.delete(thread);
      this.stopping.add(thread);
      void thread.worker.terminate();
      this.dispatch();
    }, this.budgetMs);
    thread.worker.postMessage({ text: task.text, params: task.params, shape: task.shape });
  }

  /** The thread's task, taken off it (undefined when it has none). */
  private finish(thread: Thread): Task | undefined {
    const task = thread.task;
    thread.task = undefined;
    if (thread.timer) clearTimeout(thread.timer);
    thread.timer = undefined;
    return task;
  }

  private release(thread: Thread): void {
    // An idle thread does not keep the process alive (a command that forgot to close).
    thread.worker.unref();
    this.idle.push(thread);
    this.dispatch();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const task of this.waiting.splice(0)) task.reject(new Error('the catalog is closed'));
    this.idle.length = 0;
    // Those stopping end when their statement returns; nothing waits for them.
    for (const thread of this.stopping) thread.worker.unref();
    await Promise.all([...this.threads].map((t) => t.worker.terminate()));
  }
}
