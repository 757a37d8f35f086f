// The README stays a page a newcomer reads in one sitting, with the detail in docs/: it is under 400
// lines, its configuration table names every setting the server reads, and every relative link of
// README.md and docs/*.md leads to a file that exists and, when it names one, to a heading of that file.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const README = path.join(ROOT, 'README.md');
const DOCS = path.join(ROOT, 'docs');
const MAX_README_LINES = 400;

const documents = [README, ...readdirSync(DOCS).filter((name) => name.endsWith('.md')).map((name) => path.join(DOCS, name))];
const read = (file: string) => readFileSync(file, 'utf8');

const withoutFences = (markdown: string) => markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');

/** The text outside fenced code blocks and inline code spans, where a link is a link. */
const prose = (markdown: string) => withoutFences(markdown).replace(/`[^`\n]*`/g, '');

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of withoutFences(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = heading
      .toLowerCase()
      .replace(/`([^`]*)`/g, '$1')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const repeats = seen.get(base) ?? 0;
    seen.set(base, repeats + 1);
    anchors.add(repeats ? `${base}-${repeats}` : base);
  }
  return anchors;
}

interface Link {
  from: string;
  target: string;
}

function relativeLinks(file: string): Link[] {
  const from = path.relative(ROOT, file);
  return [...prose(read(file)).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)]
    .map(([, target]) => ({ from, target: target! }))
    .filter(({ target }) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** Why a link leads nowhere, or undefined when it leads to a file (and heading) that exists. */
function brokenBecause({ from, target }: Link): string | undefined {
  const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
  const file = pathPart ? path.resolve(ROOT, path.dirname(from), decodeURIComponent(pathPart)) : path.join(ROOT, from);
  if (!file.startsWith(ROOT + path.sep)) return 'leaves the repository';
  if (!existsSync(file)) return 'no such file';
  if (anchor === undefined || statSync(file).isDirectory() || !file.endsWith('.md')) return undefined;
  return anchorsOf(read(file)).has(anchor.toLowerCase()) ? undefined : `no heading with the anchor #${anchor}`;
}

/** Every environment variable loadConfig reads, whatever its value. */
function settingsRead(): string[] {
  const names = new Set<string>();
  const env = new Proxy({} as Record<string, string | undefined>, {
    get: (_target, name) => {
      if (typeof name === 'string') names.add(name);
      return undefined;
    },
  });
  loadConfig(env);
  return [...names].sort();
}

describe('README and docs/', () => {
  it(`keeps the README under ${MAX_README_LINES} lines`, () => {
    expect(read(README).split('\n').length).toBeLessThan(MAX_README_LINES);
  });

  it('documents every setting the server reads in the README configuration table', () => {
    const configuration = read(README).split(/^## /m).find((section) => section.startsWith('Configuration\n')) ?? '';
    const settings = settingsRead();
    expect(settings.length).toBeGreaterThan(40);
    expect(settings.filter((name) => !configuration.includes(`\`${name}\``))).toEqual([]);
  });

  it('has relative links that lead to existing files and headings', () => {
    const links = documents.flatMap(relativeLinks);
    expect(links.length).toBeGreaterThan(documents.length);
    const broken = links.flatMap((link) => {
      const why = brokenBecause(link);
      return why ? [`${link.from}: ${link.target} (${why})`] : [];
    });
    expect(broken).toEqual([]);
  });

  it('reads anchors as GitHub makes them', () => {
    const anchors = anchorsOf('# Limits, and what a client sees\n## Media plane: `npm run bench:media`\n## Notes\n## Notes\n```\n# not a heading\n```\n');
    expect([...anchors]).toEqual(['limits-and-what-a-client-sees', 'media-plane-npm-run-benchmedia', 'notes', 'notes-1']);
  });
});
