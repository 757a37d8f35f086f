// The server's own HTML pages (console, consent): escaping and the document around a page's body.
// Pages load only this server's assets (their Content-Security-Policy allows nothing else).

export const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export interface HtmlDocument {
  title: string;
  /** Paths of this server's stylesheets and (deferred) scripts. */
  stylesheets: string[];
  scripts?: string[];
  body: string;
}

export function htmlDocument(doc: HtmlDocument): string {
  const styles = doc.stylesheets.map((href) => `<link rel="stylesheet" href="${escapeHtml(href)}">`).join('\n');
  const scripts = (doc.scripts ?? []).map((src) => `<script src="${escapeHtml(src)}" defer></script>`).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${escapeHtml(doc.title)}</title>
${styles}${scripts ? `\n${scripts}` : ''}
</head>
<body>
${doc.body}
</body>
</html>
`;
}
