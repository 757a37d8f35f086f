// Reconnecting with exponential backoff and jitter; the wait ends early when the browser comes back
// online. Shared by the call and chat pages.

/**
 * `next()` is the delay before the next attempt (doubling from `firstMs` up to `maxMs`, ±`jitter`),
 * `reset()` starts again from `firstMs` after a connection that held, `wait(ms)` resolves after `ms`
 * or as soon as `wake()` is called (the 'online' event calls it).
 */
export function backoff({ firstMs = 1000, maxMs = 30000, jitter = 0.25 } = {}) {
  let attempt = 0;
  let wakeUp = null;
  const wake = () => wakeUp && wakeUp();
  window.addEventListener('online', wake);
  return {
    next() {
      attempt += 1;
      const ms = Math.min(maxMs, firstMs * 2 ** (attempt - 1));
      return Math.round(ms * (1 - jitter + Math.random() * 2 * jitter));
    },
    reset() {
      attempt = 0;
    },
    wait(ms) {
      return new Promise((resolve) => {
        const done = () => {
          clearTimeout(timer);
          if (wakeUp === done) wakeUp = null;
          resolve();
        };
        const timer = setTimeout(done, ms);
        wakeUp = done;
      });
    },
    wake,
  };
}
