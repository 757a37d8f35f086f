// globalSetup of the browser tests: one Chromium for the run (test/support/browser.ts says why), with the
// fake microphone's recording beside it; closed, and waited for, when the run ends. Debian's chromium driven
// by playwright-core (no browser download); flags from ../shared/STACK.md.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserServer } from 'playwright-core';
import type { TestProject } from 'vitest/node';
import { toneWav } from './toneWav.js';

const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the browser tests connect to the run's Chromium (playwright's WebSocket endpoint). */
    chromiumEndpoint: string;
  }
}

/**
 * Chromium with a fake microphone playing `microphoneWav` (a WAV file, looped) and a fake camera, media
 * granted without asking and played without a gesture: the call and chat pages need them, the other pages
 * never ask for media. The fake camera makes 10 frames a second instead of its default 20 (each encoded and
 * decoded by the pages in a video call): the tests only need it to show a picture.
 */
function launchChromiumServer(microphoneWav: string): Promise<BrowserServer> {
  return chromium.launchServer({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream=fps=10',
      `--use-file-for-fake-audio-capture=${microphoneWav}`,
      '--autoplay-policy=no-user-gesture-required',
    ],
  });
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lia-chromium-'));
  const microphone = path.join(dir, 'microphone.wav');
  await writeFile(microphone, toneWav(4, 1));
  const server = await launchChromiumServer(microphone);
  project.provide('chromiumEndpoint', server.wsEndpoint());
  return async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  };
}
