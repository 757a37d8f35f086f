// Asking a child process over its IPC channel: send a command, wait for the reply naming `event` (or an
// {event: 'error', message} reply, which rejects).
import type { ChildProcess } from 'node:child_process';

export function ask(proc: ChildProcess, message: object, event: string, timeoutMs = 120_000): Promise<Record<string, unknown>> {
  const reply = next(proc, event, timeoutMs, `to ${JSON.stringify(message)}`);
  proc.send(message);
  return reply;
}

/** The next message of `proc` naming `event`; rejects on an error reply, or when none came within `timeoutMs`. */
export function next(proc: ChildProcess, event: string, timeoutMs = 120_000, context = ''): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      proc.off('message', onMessage);
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`no "${event}" reply${context && ` ${context}`} within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    const onMessage = (reply: Record<string, unknown>) => {
      if (reply?.event === 'error') {
        done();
        reject(new Error(String(reply.message)));
      } else if (reply?.event === event) {
        done();
        resolve(reply);
      }
    };
    proc.on('message', onMessage);
  });
}
