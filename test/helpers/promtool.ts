import { execFileSync } from 'node:child_process';

/** Whether Prometheus's `promtool` is on this machine (Debian package `prometheus`). */
export const HAVE_PROMTOOL = (() => {
  try {
    execFileSync('promtool', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
export const NO_PROMTOOL = 'skipped: no promtool (apt-get install --no-install-recommends prometheus)';
