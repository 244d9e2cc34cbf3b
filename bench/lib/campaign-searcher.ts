import { createInterface } from 'node:readline';
import { campaignSearch } from './campaign-searches.js';

/**
 * One of the campaign's search clients in a process of its own (bench/campaign.ts, --read-instance),
 * so that it can be given the CPU priority of the read instance it asks, as a client on another
 * host has its own CPU. Argument: the instance's URL, the clients to run (each loops over the six
 * searches). It searches from its start but records nothing until told: stdout "ready" once a
 * search was answered (its start-up, tsx's and fetch's loading, is then behind it); stdin "idle"
 * when the idle phase starts, "campaign" when the campaign does, "done" at its end; then it
 * prints {"idle": [ms...], "campaign": [ms...], "errors": n} and exits.
 */
const [url, clients] = [process.argv[2]!, Number(process.argv[3] ?? 1)];
let phase: 'warm-up' | 'idle' | 'campaign' | 'done' = 'warm-up';
let ready = false;
const latencies = { idle: [] as number[], campaign: [] as number[] };
let errors = 0;
const loops = Array.from({ length: clients }, async (_, k) => {
  for (let i = k; phase !== 'done'; i += clients) {
    const at = phase;
    const t0 = performance.now();
    const ok = await fetch(`${url}${campaignSearch(i)}`)
      .then(async (res) => (await res.arrayBuffer(), res.ok))
      .catch(() => false);
    if (!ok) errors++;
    else if (at === phase && at !== 'warm-up') latencies[at].push(performance.now() - t0);
    if (ok && !ready) {
      ready = true;
      process.stdout.write('ready\n');
    }
  }
});
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line === 'idle' || line === 'campaign' || line === 'done') phase = line;
});
await Promise.all(loops);
// Exit once the answer is written: a pipe's write is asynchronous, and stdin would keep the process alive.
process.stdout.write(`${JSON.stringify({ ...latencies, errors })}\n`, () => process.exit(0));
